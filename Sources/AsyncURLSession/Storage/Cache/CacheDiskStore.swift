import Dispatch
import Foundation

/// A `CacheDatabase` and the serial queue that alone touches it, opened on
/// first use (a default session that never makes a GET opens no file).
///
/// `@unchecked Sendable`: `database` and `opened` are read and written only
/// on `queue`, which serializes every access; the other properties are
/// immutable.
final class CacheDiskStore: @unchecked Sendable {
    let file: URL
    private let queue = DispatchQueue(label: "AsyncURLSession.ResponseCache.disk", qos: .utility)
    private var database: CacheDatabase?
    private var opened = false

    init(file: URL) {
        self.file = file
    }

    /// Runs `body` with the database on the queue, waiting for it; nil
    /// when the database cannot be opened (`problem` says why).
    func sync<T>(_ body: (CacheDatabase) -> T, problem: ((String) -> Void)? = nil) -> T? {
        queue.sync {
            guard let database = openIfNeeded(problem) else { return nil }
            return body(database)
        }
    }

    /// As `sync`, without waiting (writes).
    func async(_ body: @escaping @Sendable (CacheDatabase) -> Void, problem: (@Sendable (String) -> Void)? = nil) {
        queue.async { [self] in
            guard let database = openIfNeeded(problem) else { return }
            body(database)
        }
    }

    /// Waits until every write queued so far has run.
    func drain() {
        queue.sync { database?.checkpoint() }
    }

    private func openIfNeeded(_ problem: ((String) -> Void)?) -> CacheDatabase? {
        if opened { return database }
        opened = true
        if let folderProblem = StorageLocation.prepare(file.deletingLastPathComponent()) {
            problem?(folderProblem + "; the disk cache is off")
            return nil
        }
        let (database, openProblem) = CacheDatabase.open(at: file)
        if let openProblem { problem?(openProblem) }
        self.database = database
        return database
    }
}
