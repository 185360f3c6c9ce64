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
        let state = Mutex(BackgroundLinkState(events: nil))
        /// Held while attaching again, so one attempt runs at a time (on
        /// threads of their own: the attempt blocks).
        let reattaching = Mutex(())

        init(identifier: String, client: AgentClient) {
            self.identifier = identifier
            self.client = client
        }
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
        shared.state.withLock { $0 = BackgroundLinkState(events: continuation) }
        attach()
    }

    deinit {
        // The reader thread sees the end and lets the socket go (after
        // this: it changes the lease under this lock before closing).
        shared.state.withLock { state in
            if let socket = state.close() { shutdown(socket, Int32(SHUT_RDWR)) }
        }
    }

    /// Why the session's tasks cannot run, if they cannot.
    var failure: URLError? { shared.state.withLock { $0.failure } }

    /// Why the session's tasks cannot run, when no new attempt may change
    /// it (refused, in use): not a lost agent, which is attached again.
    var lastingFailure: URLError? { shared.state.withLock { $0.lastingFailure } }

    /// The transfers an earlier program left (attach's reply), for the
    /// session to make tasks of.
    var left: [BackgroundTransferStatus] { sessionSide.withLock { $0.left } }

    /// What the session keeps of its tasks here, apart from the agent's
    /// side: the transfers an earlier program left, the tasks made for
    /// them, those that had ended while away, and every running task.
    private struct SessionSide {
        var left: [BackgroundTransferStatus] = []
        var reconnectedTasks: [SessionTask] = []
        var endedWhileAway: Set<Int> = []
        /// Every task of the session until it completes (see `hold`).
        var held: [Int: SessionTask] = [:]
    }
    private let sessionSide = Mutex(SessionSide())

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
            sessionSide.withLock { $0.left = transfers.filter { $0.request != nil } }
        case .failure(let error):
            fail(error)
            return
        }
        shared.state.withLock { $0.attached(lease: socket.fd) }
        shared.read(socket)
    }

    private func fail(_ error: URLError) {
        let events = shared.state.withLock { $0.failed(error) }
        events?.finish(throwing: error)
    }

    /// Attaches again if the agent went away since (blocking, bounded, on a
    /// thread of its own); throws when that failed.
    func reattachIfLost() async throws(URLError) {
        guard shared.state.withLock({ $0.mayReattach }) else { return }
        let shared = shared
        let failure = await withCheckedContinuation { (continuation: CheckedContinuation<URLError?, Never>) in
            Thread { continuation.resume(returning: shared.reattach()) }.start()
        }
        if let failure { throw failure }
    }

    // MARK: - The session's events

    /// The tasks made for what an earlier program left.
    var reconnectedTasks: [SessionTask] { sessionSide.withLock { $0.reconnectedTasks } }

    /// Holds `task` until it completes: a background transfer goes on when
    /// nobody holds its task (a task dropped elsewhere is cancelled, which
    /// here would cancel the agent's transfer).
    func hold(_ task: SessionTask) {
        sessionSide.withLock { $0.held[task.taskIdentifier] = task }
    }

    /// Task `identifier` completed: let it go.
    func release(task identifier: Int) {
        // Out of the lock: the task may end here (its deinit runs then).
        let task = sessionSide.withLock { $0.held.removeValue(forKey: identifier) }
        _ = task
    }

    /// Reconnected tasks whose transfer had ended before this program came.
    var endedWhileAway: Set<Int> { sessionSide.withLock { $0.endedWhileAway } }

    /// The session made `task` for transfer `status` of an earlier program.
    func reconnected(_ task: SessionTask, to status: BackgroundTransferStatus) {
        sessionSide.withLock { side in
            side.reconnectedTasks.append(task)
            if status.hasEnded { side.endedWhileAway.insert(status.task) }
        }
        let events = shared.state.withLock { $0.reconnected(task: status.task, to: status) }
        events?.yield(.reconnected(task))
    }

    /// Every reconnected task is out: if none had ended, nothing is left
    /// to hand over.
    func reconnectedAll() {
        finishEventsIfDelivered()
    }

    /// The transfer of reconnected task `task` was handed over.
    func handedOver(task: Int) {
        shared.state.withLock { $0.handedOver(task: task) }
        finishEventsIfDelivered()
    }

    private func finishEventsIfDelivered() {
        let events = shared.state.withLock { $0.takeEventsIfDelivered() }
        events?.yield(.allEventsDelivered)
        events?.finish()
    }

    // MARK: - For responders

    /// The agent's transfer for reconnected task `task`, once.
    func takeReconnected(task: Int) -> Int64? {
        shared.state.withLock { $0.takeReconnected(task: task) }
    }

    /// Updates about task `task`'s transfers from now on (the last one
    /// known first). Ends when the agent goes away.
    func watch(task: Int) -> AsyncStream<BackgroundTransferStatus> {
        let (stream, continuation) = AsyncStream<BackgroundTransferStatus>.makeStream()
        let answer = shared.state.withLock { state in
            let answer = state.watch(task: task, with: continuation)
            // Yielded under the lock: the reader yields a newer update only
            // after taking the watcher under it, so none overtakes this one.
            if case .watching(let latest?) = answer { continuation.yield(latest) }
            return answer
        }
        if case .refused = answer { continuation.finish() }
        return stream
    }

    func unwatch(task: Int) {
        let watcher = shared.state.withLock { $0.unwatch(task: task) }
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
                let watcher = state.withLock { $0.received(status) }
                watcher?.yield(status)
            }
            // The lease goes before the socket closes (this closure's end).
            let watched = state.withLock { $0.readerEnded(fd: held.fd) }
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
                guard state.withLock({ $0.mayReattach }) else { return nil }
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
        let updates = state.withLock { $0.reattached(lease: socket.fd, transfers: transfers) }
        guard let updates else { return }
        for (watcher, status) in updates { watcher.yield(status) }
        read(socket)
    }

    /// The watching tasks end with `error` (which the next task sees, and
    /// tries again past, while the link is lost).
    private func end(with error: URLError) -> URLError {
        let watchers = state.withLock { $0.gaveUp(error) }
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
