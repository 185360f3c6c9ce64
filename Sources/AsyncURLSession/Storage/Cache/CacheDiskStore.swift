import Dispatch
import Foundation
import Synchronization

/// A `CacheDatabase` and the serial queue that alone touches it, opened on
/// first use (a default session that never makes a GET opens no file).
///
/// Stores are written behind, in batches: a store joins the open batch,
/// whose one job writes it in a single transaction `batchDelay` later, and
/// a later store of the same key replaces an earlier one not yet written. Storing
/// 1 KiB responses of one URL 64 at once, a job (JSON record, prepared
/// statement, WAL commit) per store cost more CPU than the requests. Every
/// other operation closes the open batch before queueing its own job, so
/// jobs still run in the order they were asked for.
///
/// `@unchecked Sendable`: `database` and `opened` are read and written only
/// on `queue`, which serializes every access; the other properties are
/// immutable or locked.
final class CacheDiskStore: @unchecked Sendable {
    let file: URL
    private let queue = DispatchQueue(label: "AsyncURLSession.ResponseCache.disk", qos: .utility)
    private var database: CacheDatabase?
    private var opened = false
    /// The batch stores join until its job starts or another job is queued.
    private let openBatch = Mutex<StoreBatch?>(nil)

    /// Stores queued as one job. `@unchecked Sendable`: `writes` is touched
    /// only while holding the owning store's `openBatch` lock.
    private final class StoreBatch: @unchecked Sendable {
        struct Write {
            let response: CachedResponse
            let now: Date
        }
        let problem: (@Sendable (String) -> Void)?
        var writes: [String: Write] = [:]
        /// Keys in the order first stored, so rows are written in that order.
        var order: [String] = []

        init(problem: (@Sendable (String) -> Void)?) {
            self.problem = problem
        }
    }

    init(file: URL) {
        self.file = file
    }

    /// Runs `body` with the database on the queue, waiting for it; nil
    /// when the database cannot be opened (`problem` says why).
    func sync<T>(_ body: (CacheDatabase) -> T, problem: ((String) -> Void)? = nil) -> T? {
        closeBatch()
        return queue.sync {
            guard let database = openIfNeeded(problem) else { return nil }
            return body(database)
        }
    }

    /// As `sync`, without waiting (writes).
    func async(_ body: @escaping @Sendable (CacheDatabase) -> Void, problem: (@Sendable (String) -> Void)? = nil) {
        closeBatch()
        queue.async { [self] in
            guard let database = openIfNeeded(problem) else { return }
            body(database)
        }
    }

    /// Waits until every write queued so far has run.
    func drain() {
        closeBatch()
        queue.sync { database?.checkpoint() }
    }

    /// Writes `response` under `key` without waiting: in the open batch
    /// (replacing an earlier store of `key` there), or in a new one whose
    /// job runs `batchDelay` later unless another operation queues it first.
    func store(_ response: CachedResponse, key: String, now: Date, problem: (@Sendable (String) -> Void)? = nil) {
        let write = StoreBatch.Write(response: response, now: now)
        let newBatch = openBatch.withLock { openBatch -> StoreBatch? in
            if let batch = openBatch {
                if batch.writes.updateValue(write, forKey: key) == nil { batch.order.append(key) }
                return nil
            }
            let batch = StoreBatch(problem: problem)
            batch.writes[key] = write
            batch.order.append(key)
            openBatch = batch
            return batch
        }
        guard let newBatch else { return }
        queue.asyncAfter(deadline: .now() + Self.batchDelay) { [self] in
            let stillOpen = openBatch.withLock { openBatch -> Bool in
                guard openBatch === newBatch else { return false }
                openBatch = nil
                return true
            }
            // Not open any more: `closeBatch` queued its job already.
            if stillOpen { writeRows(of: newBatch) }
        }
    }

    /// How long a batch stays open for more stores. Long enough that a
    /// busy session's responses share a transaction, short enough that a
    /// process rarely ends with a store unwritten (a cache loses nothing it
    /// cannot fetch again; `flush()` writes everything first).
    static let batchDelay = DispatchTimeInterval.milliseconds(20)

    /// Queues the open batch's job now, so that it runs before the job the
    /// caller queues next; later stores go to a new batch.
    private func closeBatch() {
        guard let batch = openBatch.withLock({ openBatch -> StoreBatch? in
            defer { openBatch = nil }
            return openBatch
        }) else { return }
        queue.async { [self] in writeRows(of: batch) }
    }

    /// On `queue`: a closed batch's rows, in one transaction.
    private func writeRows(of batch: StoreBatch) {
        let writes = openBatch.withLock { _ in
            batch.order.compactMap { key in batch.writes[key].map { (key: key, response: $0.response, now: $0.now) } }
        }
        guard let database = openIfNeeded(batch.problem) else { return }
        database.store(writes)
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
