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
/// immutable or a Mutex.
final class CacheDiskStore: @unchecked Sendable {
    let file: URL
    private let queue = DispatchQueue(label: "AsyncURLSession.ResponseCache.disk", qos: .utility)
    private var database: CacheDatabase?
    private var opened = false
    /// The batch stores join until its job takes it or another operation
    /// queues it; numbered so a delayed job knows its own.
    private let batches = Mutex(Batches())

    private struct Batches {
        var open: StoreBatch?
        var lastSerial: UInt64 = 0
    }

    /// Stores written as one job, one per key (the latest).
    private struct StoreBatch {
        struct Write {
            let response: CachedResponse
            let now: Date
        }
        let serial: UInt64
        let problem: (@Sendable (String) -> Void)?
        var writes: [String: Write] = [:]
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
        let newSerial = batches.withLock { batches -> UInt64? in
            if batches.open != nil {
                batches.open!.writes[key] = write
                return nil
            }
            batches.lastSerial += 1
            batches.open = StoreBatch(serial: batches.lastSerial, problem: problem, writes: [key: write])
            return batches.lastSerial
        }
        guard let newSerial else { return }
        queue.asyncAfter(deadline: .now() + Self.batchDelay) { [self] in
            // Not open any more: `closeBatch` queued its job already.
            let batch = batches.withLock { batches -> StoreBatch? in
                guard batches.open?.serial == newSerial else { return nil }
                defer { batches.open = nil }
                return batches.open
            }
            if let batch { writeRows(of: batch) }
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
        guard let batch = batches.withLock({ batches -> StoreBatch? in
            defer { batches.open = nil }
            return batches.open
        }) else { return }
        queue.async { [self] in writeRows(of: batch) }
    }

    /// On `queue`: a closed batch's rows, in one transaction.
    private func writeRows(of batch: StoreBatch) {
        guard let database = openIfNeeded(batch.problem) else { return }
        database.store(batch.writes.map { (key: $0.key, response: $0.value.response, now: $0.value.now) })
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
