internal import AgentWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A background session's link to the transfer agent, as a value: the held
/// connection (its lease), whether it was lost or the session closed, the
/// tasks watching their transfers, the last status of each, and the
/// session's `backgroundEvents` until every reconnected transfer was handed
/// over. One mutating method per input, each returning what the link does
/// after its lock (yield to a watcher, finish the events, shut a socket);
/// no I/O and no continuation is resumed here.
///
/// Driven by `BackgroundLink` under its one lock; table-tested without an
/// agent (`BackgroundLinkStateTests`).
struct BackgroundLinkState {
    typealias Watcher = AsyncStream<BackgroundTransferStatus>.Continuation
    typealias Events = AsyncThrowingStream<BackgroundSessionEvent, any Error>.Continuation

    /// Why the session cannot use the agent (refused, unreachable, lost).
    private(set) var failure: URLError?
    /// The held connection, to end it when the session goes; -1 while none
    /// is held. Changed before the socket it names is closed.
    private(set) var lease: Int32 = -1
    /// The session is gone: nothing attaches again.
    private(set) var closed = false
    /// The connection to the agent was lost and not made again yet.
    private(set) var lost = false
    private var watchers: [Int: Watcher] = [:]
    /// The last status of each task's transfer.
    private var latest: [Int: BackgroundTransferStatus] = [:]
    /// Tasks of an earlier program: their transfer in the agent.
    private var reconnectedTransfers: [Int: Int64] = [:]
    /// Reconnected tasks that had ended before this program came, not yet
    /// handed over.
    private var replaysLeft: Set<Int> = []
    private var events: Events?

    init(events: Events?) {
        self.events = events
    }

    /// Why tasks cannot run, when no new attempt may change it (refused, in
    /// use): not a lost agent, which is attached again.
    var lastingFailure: URLError? { lost ? nil : failure }

    /// Whether attaching again is worth an attempt.
    var mayReattach: Bool { lost && !closed }

    var watcherCount: Int { watchers.count }

    // MARK: Attaching and losing the agent

    /// The first attach (or a new one) holds connection `fd`.
    mutating func attached(lease fd: Int32) {
        lease = fd
    }

    /// The session cannot use the agent: the events end with `error`.
    mutating func failed(_ error: URLError) -> Events? {
        failure = error
        defer { events = nil }
        return events
    }

    /// The session goes: the socket to shut down, if one is held (its
    /// reader then lets it go).
    mutating func close() -> Int32? {
        closed = true
        defer { lease = -1 }
        return lease >= 0 ? lease : nil
    }

    /// The reader of connection `fd` saw it end. Returns whether to attach
    /// again now (a task is watching); else the next task does.
    mutating func readerEnded(fd: Int32) -> Bool {
        if lease == fd { lease = -1 }
        guard !closed else { return false }
        lost = true
        return !watchers.isEmpty
    }

    /// Attached again on `fd`, the new agent reporting `transfers`: the
    /// watchers to tell, or nil when the session went meanwhile (then the
    /// socket is closed, freeing the identifier).
    mutating func reattached(lease fd: Int32, transfers: [BackgroundTransferStatus])
        -> [(Watcher, BackgroundTransferStatus)]?
    {
        guard !closed else { return nil }
        lease = fd
        lost = false
        failure = nil
        var updates: [(Watcher, BackgroundTransferStatus)] = []
        for status in transfers {
            latest[status.task] = status
            if let watcher = watchers[status.task] { updates.append((watcher, status)) }
        }
        return updates
    }

    /// Attaching again failed with `error`: every watcher ends (the next
    /// task sees the error, and tries again past it while lost).
    mutating func gaveUp(_ error: URLError) -> [Watcher] {
        failure = error
        defer { watchers = [:] }
        return Array(watchers.values)
    }

    // MARK: Updates and watchers

    /// The agent sent `status`: the watcher to yield it to, if any.
    mutating func received(_ status: BackgroundTransferStatus) -> Watcher? {
        latest[status.task] = status
        return watchers[status.task]
    }

    /// Task `task` watches its transfer: the last status known, to yield
    /// first; `.refused` when no connection is held and none is coming
    /// (the watcher is finished at once).
    enum WatchAnswer {
        case watching(latest: BackgroundTransferStatus?)
        case refused
    }

    mutating func watch(task: Int, with watcher: Watcher) -> WatchAnswer {
        // While lost, the watcher waits for the link to attach again.
        guard lease >= 0 || mayReattach else { return .refused }
        watchers[task] = watcher
        return .watching(latest: latest[task])
    }

    mutating func unwatch(task: Int) -> Watcher? {
        watchers.removeValue(forKey: task)
    }

    // MARK: Reconnected tasks and the session's events

    /// The session made a task for transfer `status` of an earlier program:
    /// the events to tell.
    mutating func reconnected(task: Int, to status: BackgroundTransferStatus) -> Events? {
        reconnectedTransfers[task] = status.id
        latest[task] = status
        if status.hasEnded { replaysLeft.insert(task) }
        return events
    }

    /// The agent's transfer of reconnected task `task`, once.
    mutating func takeReconnected(task: Int) -> Int64? {
        reconnectedTransfers.removeValue(forKey: task)
    }

    /// The transfer of reconnected task `task` was handed over.
    mutating func handedOver(task: Int) {
        replaysLeft.remove(task)
    }

    /// The events to end (after `.allEventsDelivered`) once every ended
    /// transfer was handed over; nil while some wait, or when they ended.
    mutating func takeEventsIfDelivered() -> Events? {
        guard replaysLeft.isEmpty, let current = events else { return nil }
        events = nil
        return current
    }
}
