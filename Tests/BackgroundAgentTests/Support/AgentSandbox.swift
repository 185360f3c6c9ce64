import AsyncURLSession
import Foundation
import Testing
import TestSupport
import AgentWire
#if canImport(Glibc)
import Glibc
#endif

/// A private runtime folder, so the test's agent is its own; the agent
/// it started is stopped (by the PID it reported) and the folder removed.
/// The agent's idle exit is long (30 s): a loaded machine can take
/// seconds between two of the test's `fetch` runs, and an agent that left
/// meanwhile would take its socket with it; it is stopped by PID anyway.
final class AgentSandbox: Sendable {
    let runtime: URL
    let fetch: String

    init() throws {
        runtime = URL(fileURLWithPath: "/tmp").appendingPathComponent("bg-\(UUID().uuidString.prefix(8))")
        try #require(mkdir(runtime.path, 0o700) == 0)
        fetch = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("fetch").path
        try #require(FileManager.default.isExecutableFile(atPath: fetch), "build the fetch product first")
    }

    var folder: URL { runtime.appendingPathComponent("AsyncURLSession") }

    func run(_ arguments: [String]) async throws -> ChildProcessResult {
        try await ChildProcess.run(fetch, arguments, environment: [
            "XDG_RUNTIME_DIR": runtime.path, "ASYNCURLSESSION_AGENT_IDLE_EXIT": "30", "PATH": "/usr/bin:/bin",
            "HOME": runtime.path,
        ])
    }

    /// `--background-status`, parsed: the agent's PID and the lines.
    func status() async throws -> (agent: pid_t, lines: [String]) {
        let result = try await run(["--background-status"])
        try #require(result.status == 0, "\(result.errorText)")
        let lines = result.outputText.split(separator: "\n").map(String.init)
        let agent = lines.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { pid_t($0.dropLast()) } ?? 0
        return (agent, Array(lines.dropFirst()))
    }

    /// Asks for the status until `done` says so (at most `seconds`).
    func waitForStatus(seconds: Double = 30, _ done: ([String]) -> Bool) async throws -> (agent: pid_t, lines: [String]) {
        var last = try await status()
        for _ in 0..<Int(seconds * 10 * testTimeScale) where !done(last.lines) {
            try await Task.sleep(nanoseconds: 100_000_000)
            last = try await status()
        }
        return last
    }

    func stop(_ agent: pid_t) {
        if agent > 0 { kill(agent, SIGTERM) }
    }

    func remove() { try? FileManager.default.removeItem(at: runtime) }
}

extension AgentSandbox {
    /// The agent program built beside the tests.
    var agentPath: String {
        URL(fileURLWithPath: fetch).deletingLastPathComponent().appendingPathComponent("asyncurlsession-agent").path
    }

    /// A background configuration whose agent is this sandbox's.
    func configuration(_ identifier: String) -> SessionConfiguration {
        var configuration = SessionConfiguration.background(identifier: identifier)
        configuration.backgroundAgentFolder = folder
        configuration.backgroundAgentPath = agentPath
        configuration.downloadDirectory = runtime.appendingPathComponent("downloads")
        return configuration
    }

    /// Stops the sandbox's agent, if one runs (asked for its PID; never started for this).
    func stopAgent() {
        let client = AgentClient(folder: AgentFolder(url: folder), agentExecutable: nil)
        if case .status(let agent, _)? = try? client.send(.status, timeout: 5) { stop(agent) }
    }
}
