import AgentWire
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The agent program: what `asyncurlsession-agent` runs, and what any
/// executable that embeds this product runs to be an agent (the
/// benchmarks build one beside their clients).
///
///   [--folder DIR] [--idle-exit SECONDS] [--retention SECONDS]
///
/// Programs start it on demand (AgentClient) and talk to it over the socket
/// in its folder; it runs their background transfers, recording each in its
/// journal so that a crash or a kill loses nothing, and exits once it has
/// had no transfer and no program connected for --idle-exit seconds (also
/// ASYNCURLSESSION_AGENT_IDLE_EXIT; default 300). Stop it any time with
/// SIGTERM: transfers go on from their bytes on disk at its next start.
/// Transfers that ended and that no program came back for are forgotten,
/// with their files, after --retention seconds (also
/// ASYNCURLSESSION_AGENT_RETENTION; default 7 days), checked at start and
/// hourly.
public enum AgentProgram {
    /// Runs the agent with this process's arguments; never returns.
    public static func main() async -> Never {
        var logger = Logger(label: "AsyncURLSession.agent") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .info
        let folder = option("--folder").map { AgentFolder(url: URL(fileURLWithPath: $0)) } ?? AgentFolder.forCurrentUser()
        let environment = ProcessInfo.processInfo.environment
        let idleExit = option("--idle-exit").flatMap(Double.init)
            ?? environment["ASYNCURLSESSION_AGENT_IDLE_EXIT"].flatMap(Double.init) ?? 300
        let retention = option("--retention").flatMap(Double.init)
            ?? environment["ASYNCURLSESSION_AGENT_RETENTION"].flatMap(Double.init) ?? 7 * 86_400

        do {
            try folder.prepare()
        } catch {
            logger.critical("\(error.description)")
            exit(1)
        }
        // One agent per folder: the second to start finds the lock taken and leaves.
        let lockPath = folder.url.appendingPathComponent("agent.lock").path
        let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            logger.info("another agent serves \(folder.url.path); leaving")
            exit(0)
        }
        let agent: TransferAgent
        let listener: AgentSocket
        do {
            agent = try TransferAgent(folder: folder.url, logger: logger)
            listener = try AgentSocket.listen(at: folder.socketPath)
        } catch {
            logger.critical("cannot start: \(error)")
            exit(1)
        }
        logger.info("agent \(getpid()) serving \(folder.socketPath)")
        let server = AgentServer(agent: agent, logger: logger)
        await agent.sweep(retention: retention)
        await agent.resumeLiveTransfers()
        server.serve(listener)

        // Bounded by the idle rule: leaves once nothing has happened for idleExit seconds.
        var quietSince = Date()
        var sweptAt = Date()
        while true {
            try? await Task.sleep(nanoseconds: 250_000_000)
            if Date().timeIntervalSince(sweptAt) >= 3600 {
                sweptAt = Date()
                await agent.sweep(retention: retention)
            }
            let idle = await agent.idleSeconds
            if server.connectionCount > 0 || idle == 0 {
                quietSince = Date()
            } else if Date().timeIntervalSince(quietSince) >= idleExit {
                logger.info("agent \(getpid()) idle for \(idleExit) s; exiting")
                unlink(folder.socketPath)
                exit(0)
            }
        }
    }

    private static func option(_ name: String) -> String? {
        let arguments = CommandLine.arguments
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }
}
