import AgentWire
import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The agent's socket: accepts programs of this user, each connection on a
/// thread of its own (requests are few and small), and hands requests to
/// the `TransferAgent`.
package final class AgentServer: Sendable {
    private let agent: TransferAgent
    private let logger: Logger
    private let openConnections = Atomic<Int>(0)

    package init(agent: TransferAgent, logger: Logger) {
        self.agent = agent
        self.logger = logger
    }

    /// Connections open now (a program talking to the agent keeps it up).
    package var connectionCount: Int { openConnections.load(ordering: .relaxed) }

    /// Serves `listener` on a thread of its own, for the life of the process.
    package func serve(_ listener: AgentSocket) {
        // The listener stays with the thread, which runs until the process ends.
        nonisolated(unsafe) let listener = listener
        Thread { [self] in
            while true {
                do {
                    let connection = try listener.accept()
                    openConnections.add(1, ordering: .relaxed)
                    nonisolated(unsafe) let handed = connection
                    Thread { [self] in
                        serve(connection: handed)
                        openConnections.subtract(1, ordering: .relaxed)
                    }.start()
                } catch {
                    logger.error("\(error)")
                    usleep(100_000)
                }
            }
        }.start()
    }

    private func serve(connection: AgentSocket) {
        do {
            let peer = try PeerCredentials.of(socket: connection.fd)
            try peer.requireUser()
            connection.setReceiveTimeout(60)
            while let request = try connection.receive(AgentRequest.self) {
                if case .attach(let session) = request {
                    try hold(session, for: peer.processID, on: connection)
                    return
                }
                try connection.send(answer(request))
            }
        } catch {
            logger.notice("a connection ended: \(error.description)")
        }
    }

    /// The connection holds `session` for its program: the agent's updates
    /// go out on it until the program closes it (or dies), which frees the
    /// session for the next program.
    private func hold(_ session: String, for process: Int32, on connection: AgentSocket) throws(AgentWireError) {
        let subscriber = SessionSubscriber(session: session, process: process)
        let reply = wait { agent in await agent.attach(subscriber) }
        try connection.send(reply)
        guard case .attached = reply else { return }
        defer { wait { agent in await agent.detach(subscriber) } }
        // Bounded by the program: ends when its side closes.
        while !connection.peerHasClosed() {
            for update in subscriber.take(waiting: 0.25) {
                try connection.send(AgentReply.update(update))
            }
        }
    }

    /// Waits on this connection's own thread for the agent's answer.
    private func answer(_ request: AgentRequest) -> AgentReply {
        wait { agent in await agent.handle(request) }
    }

    private func wait<Result: Sendable>(_ body: @escaping @Sendable (TransferAgent) async -> Result) -> Result {
        let result = Mutex<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task { [agent] in
            let answer = await body(agent)
            result.withLock { $0 = answer }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }!
    }
}
