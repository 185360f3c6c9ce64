import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Starts the agent program in a session of its own, so it outlives the
/// program that started it (and its terminal), with its output appended
/// to `agent.log` in its folder.
package enum AgentLauncher {
    /// Starts `executable` for `folder`, with this program's environment and
    /// `environment` over it; returns its process ID.
    package static func start(
        _ executable: String, folder: AgentFolder, arguments: [String] = [], environment: [String: String] = [:]
    ) throws(AgentWireError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let log = folder.url.appendingPathComponent("agent.log").path
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing of this program's (sockets, files) goes to the agent.
        if let closeFrom = addCloseFrom { _ = closeFrom(&actions, 3) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (0x80, glibc 2.26), hidden behind _GNU_SOURCE:
        // a session of its own, so a terminal's hang-up does not reach it.
        // No signal blocked (the starting thread may block them all, as a
        // test runner's or a dispatch worker's does) and SIGTERM's default
        // action: `kill PID` stops it.
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var terminate = sigset_t()
        sigemptyset(&terminate)
        sigaddset(&terminate, SIGTERM)
        posix_spawnattr_setsigdefault(&attributes, &terminate)
        posix_spawnattr_setflags(&attributes, Int16(0x80 | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        // /proc/self/exe (this program as the agent): named by its path in `ps`.
        let name = executable.hasPrefix("/proc/")
            ? (try? FileManager.default.destinationOfSymbolicLink(atPath: executable)) ?? executable : executable
        let argv: [UnsafeMutablePointer<CChar>?] = ([name, "--folder", folder.url.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result: Int32
        if environment.isEmpty {
            result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        } else {
            var entries = ProcessInfo.processInfo.environment
            entries.merge(environment) { $1 }
            let envp: [UnsafeMutablePointer<CChar>?] = entries.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { envp.forEach { free($0) } }
            result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        }
        guard result == 0 else {
            throw AgentWireError("cannot start the agent \(executable): \(String(cString: strerror(result)))", errno: result)
        }
        // Reaped when it ends, so a long-lived program keeps no zombie.
        let started = pid
        Thread {
            var status: Int32 = 0
            while waitpid(started, &status, 0) < 0, errno == EINTR {}
        }.start()
        return started
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    /// glibc 2.34's posix_spawn_file_actions_addclosefrom_np, declared only
    /// for _GNU_SOURCE: found at run time.
    private static let addCloseFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }
}

/// A program's way to the agent: one request, one reply, starting the agent
/// when none answers.
package struct AgentClient: Sendable {
    package let folder: AgentFolder
    /// The agent program to start when none answers; nil: never start one.
    package let agentExecutable: String?
    /// Set in the started agent's environment, over this program's.
    package let agentEnvironment: [String: String]

    package init(folder: AgentFolder = .forCurrentUser(), agentExecutable: String?, agentEnvironment: [String: String] = [:]) {
        self.folder = folder
        self.agentExecutable = agentExecutable
        self.agentEnvironment = agentEnvironment
    }

    /// Sends `request` and returns the agent's reply; starts the agent first
    /// if none listens and `agentExecutable` is set.
    package func send(_ request: AgentRequest, timeout: Double = 30) throws(AgentWireError) -> AgentReply {
        try exchange(request, timeout: timeout).1
    }

    /// Connects (starting the agent if none listens), sends `request` and
    /// returns the connection with the reply. An agent that is going away
    /// as we connect (killed, exiting idle: it accepted, then its end
    /// broke) is given up on and the next one asked, a few times: a start
    /// the dying agent had recorded is refused then as already known.
    private func exchange(_ request: AgentRequest, timeout: Double) throws(AgentWireError) -> (AgentSocket, AgentReply) {
        var attempt = 0
        while true {
            attempt += 1
            do throws(AgentWireError) {
                let socket = try connect()
                // The agent runs as this user, or this is not our agent.
                try PeerCredentials.of(socket: socket.fd).requireUser()
                socket.setReceiveTimeout(timeout)
                try socket.send(request)
                guard let reply = try socket.receive(AgentReply.self) else {
                    throw AgentWireError(
                        "the agent closed the connection without answering; see \(folder.url.path)/agent.log", errno: ECONNRESET)
                }
                return (socket, reply)
            } catch {
                let lost = error.errno == ECONNRESET || error.errno == EPIPE
                guard lost, attempt < 5 else { throw error }
                // Bounded (5 attempts): the dying agent's socket lingers a moment.
                usleep(UInt32(20_000 * attempt))
            }
        }
    }

    /// Holds background session `session` (`AgentRequest.attach`): the
    /// agent's reply, and the connection its updates will come on (no
    /// receive timeout: updates come when transfers change).
    package func attach(session: String, timeout: Double = 30) throws(AgentWireError) -> (AgentSocket, AgentReply) {
        let (socket, reply) = try exchange(.attach(session: session), timeout: timeout)
        socket.setReceiveTimeout(0)
        return (socket, reply)
    }

    private func connect() throws(AgentWireError) -> AgentSocket {
        do {
            try folder.check()
            return try AgentSocket.connect(to: folder.socketPath)
        } catch {
            if agentExecutable == nil { throw error }
        }
        guard let agentExecutable else { throw AgentWireError("no agent program to start") }
        try folder.prepare()
        _ = try AgentLauncher.start(agentExecutable, folder: folder, environment: agentEnvironment)
        // Bounded: the agent listens within a few milliseconds of starting.
        var last = AgentWireError("the agent did not start")
        for _ in 0..<200 {
            usleep(25_000)
            do { return try AgentSocket.connect(to: folder.socketPath) } catch { last = error }
        }
        throw AgentWireError(
            "the agent started but does not answer (\(last.description)); see \(folder.url.path)/agent.log")
    }
}
