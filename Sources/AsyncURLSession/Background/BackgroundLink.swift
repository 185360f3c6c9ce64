internal import AgentWire
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A background session's hold on its identifier at the transfer agent.
///
/// Made with the session, it attaches at once (starting the agent when
/// none runs; a few milliseconds; bounded: 5 s for a new agent to listen,
/// 15 s for its answer): the agent then
/// refuses the identifier to any other program, tells which transfers an
/// earlier program left, and sends an update whenever one of the session's
/// transfers changes. A thread of its own reads those (blocking reads; the
/// agent's pace, not the cooperative pool's) and hands each to the
/// responder watching its task. The hold ends with the session (or the
/// program): the agent goes on with the transfers.
final class BackgroundLink: Sendable {
    let identifier: String
    let client: AgentClient
    /// The configuration's `isDiscretionary`, sent with each transfer.
    let isDiscretionary: Bool
    private let shared: Shared

    /// What the reader thread shares with the session (not the link
    /// itself, so the link, and with it the hold, ends with the session).
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private struct State {
        /// Why the session cannot use the agent (refused, unreachable, lost).
        var failure: URLError?
        /// The held connection, to end it when the session goes.
        var lease: Int32 = -1
        var watchers: [Int: AsyncStream<BackgroundTransferStatus>.Continuation] = [:]
        /// The last status of each task's transfer.
        var latest: [Int: BackgroundTransferStatus] = [:]
        /// Tasks of an earlier program: their transfer in the agent.
        var reconnected: [Int: Int64] = [:]
        /// Reconnected tasks that had ended before this program came, not
        /// yet handed over.
        var replaysLeft: Set<Int> = []
        var events: AsyncThrowingStream<BackgroundSessionEvent, any Error>.Continuation?
    }

    /// The session's `backgroundEvents`.
    let events: AsyncThrowingStream<BackgroundSessionEvent, any Error>

    /// Attaches to the agent for `identifier` (blocking, bounded).
    init(identifier: String, configuration: SessionConfiguration) {
        self.identifier = identifier
        isDiscretionary = configuration.isDiscretionary
        let program = AgentLocation.program(configuration)
        client = AgentClient(
            folder: AgentLocation.folder(configuration), agentExecutable: program?.path,
            agentEnvironment: program?.environment ?? [:])
        shared = Shared()
        let (events, continuation) = AsyncThrowingStream<BackgroundSessionEvent, any Error>.makeStream()
        self.events = events
        shared.state.withLock { $0.events = continuation }
        attach()
    }

    deinit {
        let lease = shared.state.withLock { state -> Int32 in
            defer { state.lease = -1 }
            return state.lease
        }
        // The reader thread sees the end and lets the socket go.
        if lease >= 0 { shutdown(lease, Int32(SHUT_RDWR)) }
    }

    /// Why the session's tasks cannot run, if they cannot.
    var failure: URLError? { shared.state.withLock { $0.failure } }

    /// The transfers an earlier program left (attach's reply), for the
    /// session to make tasks of.
    private(set) var left: [BackgroundTransferStatus] {
        get { leftTransfers.withLock { $0 } }
        set { leftTransfers.withLock { $0 = newValue } }
    }
    private let leftTransfers = Mutex<[BackgroundTransferStatus]>([])

    private func attach() {
        let reply: AgentReply
        let socket: AgentSocket
        do {
            (socket, reply) = try client.attach(session: identifier, timeout: 15)
        } catch {
            fail(URLError.make(
                .cannotConnectToHost, url: nil,
                reason: "The background session \"\(identifier)\" cannot reach the transfer agent: \(error.description). "
                    + "Link BackgroundAgent into your program (the AsyncURLSession and URLSessionCompat products do) so it "
                    + "serves as its own agent, or build the asyncurlsession-agent product beside it, or set "
                    + "ASYNCURLSESSION_AGENT to it."))
            return
        }
        switch reply {
        case .attached(let transfers):
            left = transfers.filter { $0.request != nil }
        case .sessionInUse(let process):
            fail(URLError.make(
                .backgroundSessionInUseByAnotherProcess, url: nil,
                reason: "The background session \"\(identifier)\" is in use by process \(process): one program at a time "
                    + "may hold an identifier. End that session (or that program), or use another identifier."))
            return
        case .refused(let reason):
            fail(URLError.make(.cannotLoadFromNetwork, url: nil, reason: "The transfer agent refused the session: \(reason)"))
            return
        default:
            fail(URLError.make(.cannotLoadFromNetwork, url: nil, reason: "The transfer agent answered something else than asked."))
            return
        }
        shared.state.withLock { $0.lease = socket.fd }
        // The socket stays with the thread, which alone reads it.
        nonisolated(unsafe) let held = socket
        let shared = shared
        let identifier = identifier
        Thread {
            // Bounded by the connection: ends when the session lets it go
            // (shutdown) or the agent goes.
            while let reply = try? held.receive(AgentReply.self) {
                guard case .update(let status) = reply else { continue }
                let watcher = shared.state.withLock { state in
                    state.latest[status.task] = status
                    return state.watchers[status.task]
                }
                watcher?.yield(status)
            }
            let watchers = shared.state.withLock { state -> [AsyncStream<BackgroundTransferStatus>.Continuation] in
                guard state.lease >= 0 else { return [] }
                state.lease = -1
                state.failure = URLError.make(
                    .backgroundSessionWasDisconnected, url: nil,
                    reason: "The transfer agent of background session \"\(identifier)\" went away; its transfers go on "
                        + "when it starts again: create the session again to reconnect.")
                defer { state.watchers = [:] }
                return Array(state.watchers.values)
            }
            for watcher in watchers { watcher.finish() }
        }.start()
    }

    private func fail(_ error: URLError) {
        let events = shared.state.withLock { state in
            state.failure = error
            defer { state.events = nil }
            return state.events
        }
        events?.finish(throwing: error)
    }

    // MARK: - The session's events

    /// The tasks made for what an earlier program left.
    var reconnectedTasks: [SessionTask] { reconnectedTaskList.withLock { $0 } }
    private let reconnectedTaskList = Mutex<[SessionTask]>([])

    /// Every task of the session until it completes: a background transfer
    /// goes on when nobody holds its task (a task dropped elsewhere is
    /// cancelled, which here would cancel the agent's transfer).
    private let heldTasks = Mutex<[Int: SessionTask]>([:])

    func hold(_ task: SessionTask) {
        heldTasks.withLock { $0[task.taskIdentifier] = task }
    }

    /// Task `identifier` completed: let it go.
    func release(task identifier: Int) {
        // Out of the lock: the task may end here (its deinit runs then).
        let task = heldTasks.withLock { $0.removeValue(forKey: identifier) }
        _ = task
    }

    /// Reconnected tasks whose transfer had ended before this program came.
    var endedWhileAway: Set<Int> { endedWhileAwayList.withLock { $0 } }
    private let endedWhileAwayList = Mutex<Set<Int>>([])

    /// The session made `task` for transfer `status` of an earlier program.
    func reconnected(_ task: SessionTask, to status: BackgroundTransferStatus) {
        reconnectedTaskList.withLock { $0.append(task) }
        if status.hasEnded { endedWhileAwayList.withLock { _ = $0.insert(status.task) } }
        let events = shared.state.withLock { state in
            state.reconnected[status.task] = status.id
            state.latest[status.task] = status
            if status.hasEnded { state.replaysLeft.insert(status.task) }
            return state.events
        }
        events?.yield(.reconnected(task))
    }

    /// Every reconnected task is out: if none had ended, nothing is left
    /// to hand over.
    func reconnectedAll() {
        finishEventsIfDelivered()
    }

    /// The transfer of reconnected task `task` was handed over.
    func handedOver(task: Int) {
        shared.state.withLock { _ = $0.replaysLeft.remove(task) }
        finishEventsIfDelivered()
    }

    private func finishEventsIfDelivered() {
        let events = shared.state.withLock { state -> AsyncThrowingStream<BackgroundSessionEvent, any Error>.Continuation? in
            guard state.replaysLeft.isEmpty, let events = state.events else { return nil }
            state.events = nil
            return events
        }
        events?.yield(.allEventsDelivered)
        events?.finish()
    }

    // MARK: - For responders

    /// The agent's transfer for reconnected task `task`, once.
    func takeReconnected(task: Int) -> Int64? {
        shared.state.withLock { $0.reconnected.removeValue(forKey: task) }
    }

    /// Updates about task `task`'s transfers from now on (the last one
    /// known first). Ends when the agent goes away.
    func watch(task: Int) -> AsyncStream<BackgroundTransferStatus> {
        let (stream, continuation) = AsyncStream<BackgroundTransferStatus>.makeStream()
        let registered = shared.state.withLock { state -> Bool in
            guard state.lease >= 0 else { return false }
            state.watchers[task] = continuation
            if let latest = state.latest[task] { continuation.yield(latest) }
            return true
        }
        if !registered { continuation.finish() }
        return stream
    }

    func unwatch(task: Int) {
        let watcher = shared.state.withLock { $0.watchers.removeValue(forKey: task) }
        watcher?.finish()
    }

    /// Sends `request` to the agent on a connection of its own, from a
    /// thread of its own (the socket blocks).
    func send(_ request: AgentRequest) async throws(URLError) -> AgentReply {
        let client = client
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<AgentReply, AgentWireError>, Never>) in
            Thread {
                continuation.resume(returning: Result { () throws(AgentWireError) in try client.send(request, timeout: 30) })
            }.start()
        }
        switch result {
        case .success(let reply): return reply
        case .failure(let error):
            throw URLError.make(
                .backgroundSessionWasDisconnected, url: nil,
                reason: "Cannot reach the transfer agent of background session \"\(identifier)\": \(error.description).")
        }
    }
}
