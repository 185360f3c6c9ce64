import AgentWire
import Foundation
import LoopbackServer
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A program on the library with no agent program to find (none beside it,
/// none on the PATH, no ASYNCURLSESSION_AGENT): its background session
/// starts the program itself as the agent (issue 44).
@Suite struct SelfAgentTests {
    @Test func aProgramWithNoAgentProgram_servesAsItsOwnAgent() async throws {
        try await withServer(timeLimit: 90) { server in
            let runtime = URL(fileURLWithPath: "/tmp").appendingPathComponent("self-\(UUID().uuidString.prefix(8))")
            try #require(mkdir(runtime.path, 0o700) == 0)
            defer { try? FileManager.default.removeItem(at: runtime) }
            // user-program alone in a folder of its own: `swift build` puts
            // asyncurlsession-agent beside it, where the lookup would find it.
            let built = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("user-program")
            try #require(FileManager.default.isExecutableFile(atPath: built.path), "`swift build --build-tests` builds it")
            let bin = runtime.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            let program = bin.appendingPathComponent("user-program")
            try copyCloseOnExec(built, to: program)
            let folder = AgentFolder(url: runtime.appendingPathComponent("AsyncURLSession"))
            // Whatever happens, the agent this test started is stopped.
            defer {
                let client = AgentClient(folder: folder, agentExecutable: nil)
                if case .status(let agent, _)? = try? client.send(.status, timeout: 5), agent > 0 { kill(agent, SIGTERM) }
            }

            let result = try await ChildProcess.run(
                program.path, ["background-download", server.url("/range/3000000").absoluteString],
                environment: [
                    "HOME": runtime.appendingPathComponent("home").path,
                    "XDG_RUNTIME_DIR": runtime.path,
                    "XDG_DATA_HOME": runtime.appendingPathComponent("data").path,
                    "PATH": "/usr/bin:/bin",
                    "ASYNCURLSESSION_AGENT_IDLE_EXIT": "30",
                ])
            #expect(result.status == 0, "\(result.errorText)")
            #expect(result.outputText == "3000000\n", "\(result.outputText) \(result.errorText)")

            // The agent that served it is the program itself, still running
            // after the program ended.
            let reply = try AgentClient(folder: folder, agentExecutable: nil).send(.status, timeout: 5)
            guard case .status(let agent, let transfers) = reply else {
                Issue.record("status: \(reply)")
                return
            }
            #expect(transfers.isEmpty, "\(transfers)")
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(agent)/exe")
            #expect(executable == program.path)
            let log = (try? String(contentsOf: folder.url.appendingPathComponent("agent.log"), encoding: .utf8)) ?? ""
            #expect(log.contains("agent \(agent) serving"), "\(log)")

            // Stopped by its PID, as the README says (the program that
            // started it blocked signals on its thread: none reach the agent so).
            kill(agent, SIGTERM)
            var gone = false
            for _ in 0..<Int(100 * testTimeScale) where !gone {
                try await Task.sleep(nanoseconds: 50_000_000)
                gone = Self.hasEnded(agent)
            }
            #expect(gone, "agent \(agent) still runs after SIGTERM")
        }
    }

    /// No such process, or a zombie nobody reaped yet.
    private static func hasEnded(_ process: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8) else { return true }
        return status.split(separator: "\n").contains { $0.hasPrefix("State:") && $0.contains("Z") }
    }
}

/// Copies an executable through a descriptor opened close-on-exec.
/// `FileManager.copyItem` opens its destination without O_CLOEXEC, so a
/// child another test spawns at that moment inherits the write descriptor
/// until its exec, and running the copy then fails with "Text file busy"
/// (seen once in a full run). Close-on-exec only shortens that window (a
/// child between its fork and its exec still holds the descriptor, CI stop
/// 62), so `ChildProcess.run` also retries a busy program for a moment.
private func copyCloseOnExec(_ source: URL, to destination: URL) throws {
    let bytes = try Data(contentsOf: source)
    let fd = open(destination.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
    guard fd >= 0 else { throw CopyFailure(reason: "open \(destination.path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == bytes.count else { throw CopyFailure(reason: "short write to \(destination.path)") }
}

private struct CopyFailure: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
