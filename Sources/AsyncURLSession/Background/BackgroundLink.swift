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
///
/// When the agent goes away (killed, crashed), the link attaches again
/// under the same identifier, which starts the next agent (it takes up the
/// journal's transfers): at once while a task is watching (its updates
/// resume from what the new agent says), else when the next task starts.
/// Bounded: `reattachPauses` attempts, then the watching tasks fail saying
/// so (and the next task tries again).
final class BackgroundLink: Sendable {
    let identifier: String
    let client: AgentClient
    /// The configuration's `isDiscretionary`, sent with each transfer.
    let isDiscretionary: Bool
    private let shared: Shared

    /// What the reader thread shares with the session (not the link
    /// itself, so the link, and with it the hold, ends with the session).
    fileprivate final class Shared: Sendable {
        let identifier: String
        let client: AgentClient
        let state = Mutex(State())
        /// Held while attaching again, so one attempt runs at a time (on
        /// threads of their own: the attempt blocks).
        let reattaching = Mutex(())

        init(identifier: String, client: AgentClient) {
            self.identifier = identifier
            self.client = client
        }
    }

    fileprivate struct State {
        /// Why the session cannot use the agent (refused, unreachable, lost).
        var failure: URLError?
        /// The held connection, to end it when the session goes; -1 while
        /// none is held. Changed only under the lock, before the socket
        /// it names is closed.
        var lease: Int32 = -1
        /// The session is gone: nothing attaches again.
        var closed = false
        /// The connection to the agent was lost and not made again yet.
        var lost = false
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

    /// Seconds to wait before each attempt to attach again after the
    /// agent went away (the first at once: a killed agent's successor
    /// starts within milliseconds).
    static let reattachPauses: [Double] = [0, 0.5, 1, 2, 4]

    /// Attaches to the agent for `identifier` (blocking, bounded).
    init(identifier: String, configuration: SessionConfiguration) {
        self.identifier = identifier
        isDiscretionary = configuration.isDiscretionary
        let program = AgentLocation.program(configuration)
        client = AgentClient(
            folder: AgentLocation.folder(configuration), agentExecutable: program?.path,
            agentEnvironment: program?.environment ?? [:])
        shared = Shared(identifier: identifier, client: client)
        let (events, continuation) = AsyncThrowingStream<BackgroundSessionEvent, any Error>.makeStream()
        self.events = events
        shared.state.withLock { $0.events = continuation }
        attach()
    }

    deinit {
        shared.state.withLock { state in
            state.closed = true
            // The reader thread sees the end and lets the socket go (after
            // this: it changes the lease under this lock before closing).
            if state.lease >= 0 { shutdown(state.lease, Int32(SHUT_RDWR)) }
            state.lease = -1
        }
    }

    /// Why the session's tasks cannot run, if they cannot.
    var failure: URLError? { shared.state.withLock { $0.failure } }

    /// Why the session's tasks cannot run, when no new attempt may change
    /// it (refused, in use): not a lost agent, which is attached again.
    var lastingFailure: URLError? { shared.state.withLock { $0.lost ? nil : $0.failure } }

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
        switch Shared.attachment(reply, identifier: identifier) {
        case .success(let transfers):
            left = transfers.filter { $0.request != nil }
        case .failure(let error):
            fail(error)
            return
        }
        shared.state.withLock { $0.lease = socket.fd }
        shared.read(socket)
    }

    private func fail(_ error: URLError) {
        let events = shared.state.withLock { state in
            state.failure = error
            defer { state.events = nil }
            return state.events
        }
        events?.finish(throwing: error)
    }

    /// Attaches again if the agent went away since (blocking, bounded, on a
    /// thread of its own); throws when that failed.
    func reattachIfLost() async throws(URLError) {
        guard shared.state.withLock({ $0.lost && !$0.closed }) else { return }
        let shared = shared
        let failure = await withCheckedContinuation { (continuation: CheckedContinuation<URLError?, Never>) in
            Thread { continuation.resume(returning: shared.reattach()) }.start()
        }
        if let failure { throw failure }
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
            // While lost, the watcher waits for the link to attach again.
            guard state.lease >= 0 || (state.lost && !state.closed) else { return false }
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

extension BackgroundLink.Shared {
    /// Reads `socket`'s updates on a thread of its own until the session
    /// lets it go or the agent goes; then attaches again (at once while a
    /// task watches, else left to the next task).
    func read(_ socket: AgentSocket) {
        // The socket stays with the thread, which alone reads it.
        nonisolated(unsafe) let held = socket
        Thread { [self] in
            // Bounded by the connection: ends when the session lets it go
            // (shutdown) or the agent goes.
            while let reply = try? held.receive(AgentReply.self) {
                guard case .update(let status) = reply else { continue }
                let watcher = state.withLock { state in
                    state.latest[status.task] = status
                    return state.watchers[status.task]
                }
                watcher?.yield(status)
            }
            let watched = state.withLock { state -> Bool in
                // The lease goes before the socket closes (this closure's end).
                if state.lease == held.fd { state.lease = -1 }
                guard !state.closed else { return false }
                state.lost = true
                return !state.watchers.isEmpty
            }
            if watched { _ = reattach() }
        }.start()
    }

    /// Attaches again after the agent went away, `reattachPauses` attempts
    /// (blocking); nil once attached (the watchers get the new agent's
    /// status of their transfers), else the error the watchers ended with.
    func reattach() -> URLError? {
        reattaching.withLock { _ -> URLError? in
            var last = "no attempt"
            for pause in BackgroundLink.reattachPauses {
                guard state.withLock({ $0.lost && !$0.closed }) else { return nil }
                if pause > 0 { usleep(UInt32(pause * 1e6)) }
                let socket: AgentSocket
                let reply: AgentReply
                do throws(AgentWireError) {
                    (socket, reply) = try client.attach(session: identifier, timeout: 15)
                } catch {
                    last = error.description
                    continue
                }
                switch Self.attachment(reply, identifier: identifier) {
                case .success(let transfers):
                    install(socket, transfers)
                    return nil
                case .failure(let error):
                    // Refused or held by another program: no point in trying again now.
                    return end(with: error)
                }
            }
            return end(with: URLError.make(
                .backgroundSessionWasDisconnected, url: nil,
                reason: "The transfer agent of background session \"\(identifier)\" went away and could not be started "
                    + "again (\(BackgroundLink.reattachPauses.count) attempts: \(last)). Its transfers are kept in its "
                    + "journal and go on when an agent starts: the session tries again with its next task, or create the "
                    + "session again; see \(client.folder.url.path)/agent.log."))
        }
    }

    /// The new connection is the session's (unless the session went
    /// meanwhile: then it closes, freeing the identifier at the agent).
    private func install(_ socket: AgentSocket, _ transfers: [BackgroundTransferStatus]) {
        let updates = state.withLock { state -> [(AsyncStream<BackgroundTransferStatus>.Continuation, BackgroundTransferStatus)]? in
            guard !state.closed else { return nil }
            state.lease = socket.fd
            state.lost = false
            state.failure = nil
            var updates: [(AsyncStream<BackgroundTransferStatus>.Continuation, BackgroundTransferStatus)] = []
            for status in transfers {
                state.latest[status.task] = status
                if let watcher = state.watchers[status.task] { updates.append((watcher, status)) }
            }
            return updates
        }
        guard let updates else { return }
        for (watcher, status) in updates { watcher.yield(status) }
        read(socket)
    }

    /// The watching tasks end with `error` (which the next task sees, and
    /// tries again past, while the link is lost).
    private func end(with error: URLError) -> URLError {
        let watchers = state.withLock { state -> [AsyncStream<BackgroundTransferStatus>.Continuation] in
            state.failure = error
            defer { state.watchers = [:] }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.finish() }
        return error
    }

    /// What an attach reply means for the session: its transfers, or why it
    /// cannot have the identifier.
    static func attachment(_ reply: AgentReply, identifier: String) -> Result<[BackgroundTransferStatus], URLError> {
        switch reply {
        case .attached(let transfers):
            return .success(transfers)
        case .sessionInUse(let process):
            return .failure(URLError.make(
                .backgroundSessionInUseByAnotherProcess, url: nil,
                reason: "The background session \"\(identifier)\" is in use by process \(process): one program at a time "
                    + "may hold an identifier. End that session (or that program), or use another identifier."))
        case .refused(let reason):
            return .failure(URLError.make(.cannotLoadFromNetwork, url: nil, reason: "The transfer agent refused the session: \(reason)"))
        default:
            return .failure(URLError.make(.cannotLoadFromNetwork, url: nil, reason: "The transfer agent answered something else than asked."))
        }
    }
}
