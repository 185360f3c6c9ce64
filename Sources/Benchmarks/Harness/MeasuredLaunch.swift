// Runs a client through bench-launch (Clients/Launch/main.c), which fork()s it
// from a tiny address space and reports its wait4 rusage: spawned straight from
// the harness, a client's ru_maxrss would include the harness's own peak RSS
// (exec folds the replaced address space's high-water mark into ru_maxrss).
import Foundation

enum MeasuredLaunch {
    private struct LaunchResult: Decodable {
        var exited: Bool
        var exitCode: Int32
        var signal: Int32
        var timedOut: Bool
        var userSeconds: Double
        var systemSeconds: Double
        var maxRSSKiB: Int

        enum CodingKeys: String, CodingKey {
            case exited, signal
            case exitCode = "exit_code"
            case timedOut = "timed_out"
            case userSeconds = "user_s"
            case systemSeconds = "sys_s"
            case maxRSSKiB = "max_rss_kib"
        }
    }

    /// Runs `executable` with `arguments` under `launcher`, killing it after
    /// `timeout` seconds; returns the client's own exit and rusage. The
    /// launcher passes `environment` (default: the harness's) on to the client.
    static func run(
        launcher: String, executable: String, arguments: [String], timeout: Double,
        stdoutPath: String, stderrPath: String, rusagePath: String, environment: [String: String]? = nil
    ) throws -> ChildExit {
        let pid = try ChildProcess.spawn(
            executable: launcher,
            arguments: [rusagePath, String(Int(timeout.rounded(.up))), "--", executable] + arguments,
            stdoutPath: stdoutPath, stderrPath: stderrPath,
            environment: environment ?? ProcessInfo.processInfo.environment)
        CleanupRegistry.shared.setClient(pid)
        defer { CleanupRegistry.shared.setClient(nil) }
        let launcherExit = try ChildProcess.wait(for: pid, timeout: timeout + 20)
        guard let data = FileManager.default.contents(atPath: rusagePath),
              let result = try? JSONDecoder().decode(LaunchResult.self, from: data)
        else {
            throw HarnessError.setup("bench-launch left no rusage (\(launcherExit.description))")
        }
        return ChildExit(
            exitCode: result.exited ? result.exitCode : nil,
            signal: result.exited ? nil : result.signal,
            userSeconds: result.userSeconds,
            systemSeconds: result.systemSeconds,
            maxRSSKiB: result.maxRSSKiB,
            timedOut: result.timedOut)
    }
}
