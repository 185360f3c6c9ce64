// CurlEngine: the libcurl boundary. The only module that imports CCurl.
//
// Threading: a few dedicated engine threads (`EngineShard`, one per core up to
// four) each own the libcurl handles (easy, multi, share) they use. Nothing
// else calls libcurl, except a thread that starts a transfer while its shard
// sleeps with nothing in flight: it runs that turn itself (`InlineTurn`),
// holding the loop's ownership lock; and a consumer about to park on the only
// transfer of a sleeping shard, which may wait for it itself for a bounded
// time under the same lock (`InlineWait`). Other threads talk to a shard
// through its command queue (lock-protected, waking the loop through an
// eventfd: one write per batch, not per command). A transfer is placed on
// one shard when its identifier is made and every command about it goes there.
//
// Ownership: a session of the core opens one multi handle (one connection
// pool) on each shard it may use. Transfers live in that multi's table on
// their shard's thread; libcurl's PRIVATE/WRITEDATA pointers are unretained
// references whose lifetime that table guarantees.
//
// Errors: every failure reaches the transfer's delegate exactly once, as a
// `URLError`, through `TransferDelegate.transferDidComplete(_:of:)`. Delegates are
// called on the engine thread (or an inline turn's or wait's) and must not block or call
// user code.
internal import CCurl
import Foundation
import Synchronization

/// Identifies one engine session (one multi handle, one connection pool, on
/// each shard it may use). The low bits hold how many shards that is, so
/// routing needs no shared table.
package struct EngineSessionID: Hashable, Sendable {
    package let rawValue: UInt64

    init(serial: UInt64, shardCount: Int) {
        rawValue = serial << CurlEngine.shardBits | UInt64(shardCount - 1)
    }

    /// Shards 0..<shardCount serve this session's transfers.
    var shardCount: Int { Int(rawValue & CurlEngine.shardMask) + 1 }
}

/// Identifies one transfer (one request/response exchange on one easy handle).
/// The low bits name the shard it runs on.
package struct TransferID: Hashable, Sendable {
    package let rawValue: UInt64

    init(serial: UInt64, shard: Int) {
        rawValue = serial << CurlEngine.shardBits | UInt64(shard)
    }

    var shard: Int { Int(rawValue & CurlEngine.shardMask) }

}

/// Options that apply to a whole engine session (its multi handle).
package struct EngineSessionOptions: Sendable {
    /// `CURLMOPT_MAX_HOST_CONNECTIONS`; 0 means unlimited.
    package var maximumConnectionsPerHost: Int
    /// Hears the pool's changes (pool metrics); nil: nothing is counted.
    package var poolObserver: (any ConnectionPoolObserver)?
    package init(maximumConnectionsPerHost: Int, poolObserver: (any ConnectionPoolObserver)? = nil) {
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
        self.poolObserver = poolObserver
    }

    /// The share of shard `index` out of `count`: the per-host limit is split
    /// so that all of the session's multi handles together never exceed it
    /// (`count` is at most the limit, so each gets at least one).
    func part(_ index: Int, of count: Int) -> EngineSessionOptions {
        let limit = maximumConnectionsPerHost
        guard limit > 0, count > 1 else { return self }
        return EngineSessionOptions(
            maximumConnectionsPerHost: limit / count + (index < limit % count ? 1 : 0), poolObserver: poolObserver)
    }
}

package final class CurlEngine: Sendable {
    /// The process-wide engine. libcurl's global state is initialised once, here.
    package static let shared = CurlEngine()

    static let shardBits: UInt64 = 3
    static let shardMask: UInt64 = (1 << shardBits) - 1
    static let maximumThreads = 8

    private let shards: [EngineShard]
    /// Runs Swift jobs on the engine threads (see `EngineExecutor`).
    package let executor: EngineExecutor
    private let nextIdentifier = Atomic<UInt64>(1)

    private init() {
        // curl_global_init is thread-safe in this build (CURL_VERSION_THREADSAFE),
        // but it must run before any other libcurl call: `shared` is lazily and
        // atomically initialised, which orders it before the engine threads start.
        curl_global_init(Int(CURL_GLOBAL_ALL))
        ccurl_ignore_sigpipe_if_default()
        shards = (0..<Self.configuredThreadCount()).map(EngineShard.init(index:))
        executor = EngineExecutor(shards: shards)
        for shard in shards { shard.startThread(executor: executor) }
    }

    /// How many engine threads run: `ASYNCURLSESSION_ENGINE_THREADS` (1...8)
    /// when set, else one per available core, at most four. More than the
    /// cores would only add hand-offs; beyond four, one machine's loopback or
    /// network is the limit long before the threads are.
    ///
    /// Read with getenv and the affinity syscall, not ProcessInfo, whose
    /// first use maps in more of FoundationEssentials: a single slow 1 GiB
    /// download (W6) peaked at 33,228 KiB RSS with it, 32,748 without
    /// (medians of 5).
    static func configuredThreadCount() -> Int {
        if let value = getenv("ASYNCURLSESSION_ENGINE_THREADS"),
            let count = Int(String(cString: value).trimmingCharacters(in: .whitespaces)), count >= 1
        {
            return min(count, maximumThreads)
        }
        return min(4, max(1, Int(ccurl_available_cpus())))
    }

    /// How many engine threads this process runs.
    package var threadCount: Int { shards.count }

    /// A new session. Its transfers may use every engine thread, unless its
    /// per-host connection limit is smaller than their number: each thread's
    /// pool gets at least one connection of the limit.
    package func makeSession(options: EngineSessionOptions) -> TransferPlacement {
        let limit = options.maximumConnectionsPerHost
        let count = limit > 0 ? min(shards.count, limit) : shards.count
        return TransferPlacement(
            session: EngineSessionID(serial: nextSerial(), shardCount: count), connectionLimit: max(0, limit))
    }

    /// A new transfer of `url` in the session of `placement`, placed on an
    /// engine thread (see `TransferPlacement`). Make it only for a transfer
    /// that is then started: it counts as placed until it finishes.
    package func makeTransferID(for url: String, in placement: TransferPlacement) -> TransferID {
        TransferID(serial: nextSerial(), shard: placement.place(url))
    }

    private func nextSerial() -> UInt64 {
        nextIdentifier.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    package func openSession(_ id: EngineSessionID, options: EngineSessionOptions) {
        let count = id.shardCount
        for index in 0..<count {
            shards[index].commands.enqueue(.openSession(id, options.part(index, of: count)))
        }
    }

    /// Counts the pool of a session opened without a pool observer, from
    /// now on, on each of its engine threads.
    package func observePool(_ id: EngineSessionID, observer: any ConnectionPoolObserver) {
        for index in 0..<id.shardCount {
            shards[index].commands.enqueue(.observePool(id, observer))
        }
    }

    /// Cancels the session's transfers and frees its handles.
    package func closeSession(_ id: EngineSessionID) {
        for index in 0..<id.shardCount {
            shards[index].commands.enqueue(.closeSession(id))
        }
    }

    /// Starts a transfer. The delegate hears about it exactly once at the end.
    /// `collectsMetrics`: false when nobody can read the transfer's metrics
    /// (they are then read from libcurl only if it fails).
    package func start(
        _ id: TransferID,
        in placement: TransferPlacement,
        request: TransferRequest,
        collectsMetrics: Bool,
        delegate: any TransferDelegate
    ) {
        shards[id.shard].commands.enqueue(.start(id, placement, request, collectsMetrics: collectsMetrics, delegate))
    }

    /// Called by a consumer about to park until transfer `id` gives it
    /// something (inside its continuation's closure): when an inline turn
    /// started `id` on an idle engine thread that still sleeps with only
    /// `id` in flight, waits for it on the calling thread, for a bounded
    /// time, until `isDone()` (see `InlineWait`). Returns at once otherwise.
    package func waitInline(for id: TransferID, until isDone: () -> Bool) {
        let commands = shards[id.shard].commands
        // The hint first: while several transfers run, a park costs one atomic load.
        guard commands.mayWaitInline(for: id), EngineTurn.current == nil, !MainThreadCheck.isMainThread else { return }
        commands.waitInline(for: id, limit: InlineWait.limit, until: isDone)
    }

    /// Suspends a transfer (both directions), as `URLSessionTask.suspend()`.
    package func suspend(_ id: TransferID, in session: EngineSessionID) {
        shards[id.shard].commands.enqueue(.suspend(id, session))
    }

    /// Undoes `suspend`.
    package func resume(_ id: TransferID, in session: EngineSessionID) {
        shards[id.shard].commands.enqueue(.resume(id, session))
    }

    /// The consumer has drained its buffer: deliver the body again.
    package func resumeReceiving(_ id: TransferID, in session: EngineSessionID) {
        shards[id.shard].commands.enqueue(.resumeReceiving(id, session))
    }

    /// A body stream's producer wrote bytes: send again.
    package func resumeSending(_ id: TransferID, in session: EngineSessionID) {
        shards[id.shard].commands.enqueue(.resumeSending(id, session))
    }

    /// Cancels a transfer. Its delegate is told `URLError(.cancelled)` unless the
    /// transfer already finished.
    package func cancel(_ id: TransferID, in session: EngineSessionID, error: URLError) {
        shards[id.shard].commands.enqueue(.cancel(id, session, error))
    }

    // MARK: Raw streams

    /// Queues bytes on the open stream of connect-only transfer `id`; the
    /// delegate hears `streamDidWrite` as they go out.
    package func sendOnStream(_ id: TransferID, _ data: Data) {
        shards[id.shard].commands.enqueue(.streamSend(id, data))
    }

    /// Undoes a `streamDidReceive` that returned false.
    package func resumeReadingStream(_ id: TransferID) {
        shards[id.shard].commands.enqueue(.streamResumeReading(id))
    }

    /// Half-closes the stream once its queued bytes are sent (a TCP FIN):
    /// the peer reads the end, and this side can still read.
    package func closeStreamForWriting(_ id: TransferID) {
        shards[id.shard].commands.enqueue(.streamCloseWrite(id))
    }

    /// Closes the stream; its delegate hears `streamDidEnd` if it had not yet.
    package func closeStream(_ id: TransferID) {
        shards[id.shard].commands.enqueue(.streamClose(id))
    }

    /// libcurl's version string, e.g. "libcurl/7.88.1 OpenSSL/3.0.x ...".
    package static var libcurlVersion: String {
        String(cString: curl_version())
    }
}
