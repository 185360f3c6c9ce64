// Spawning children with posix_spawn and reaping them with wait4, which hands
// back the child's own rusage (user/system CPU, peak RSS). Everything the
// harness starts (openssl, nginx, the clients) goes through here, so nothing
// else in the process reaps our children.
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization

/// How a child ended, with its resource usage.
struct ChildExit: Sendable {
    /// Exit status, or nil when killed by a signal.
    var exitCode: Int32?
    /// Terminating signal, or nil when it exited.
    var signal: Int32?
    var userSeconds: Double
    var systemSeconds: Double
    /// ru_maxrss: peak resident set size in KiB (Linux).
    var maxRSSKiB: Int
    /// Killed by us because it ran past its time limit.
    var timedOut = false

    var cpuSeconds: Double { userSeconds + systemSeconds }
    var succeeded: Bool { exitCode == 0 }

    var description: String {
        if timedOut { return "killed after its time limit" }
        if let exitCode { return "exit status \(exitCode)" }
        return "killed by signal \(signal ?? 0)"
    }
}

enum ChildProcessError: Error, CustomStringConvertible {
    case spawnFailed(String, Int32)
    case notReaped(pid_t)

    var description: String {
        switch self {
        case .spawnFailed(let path, let code): "cannot start \(path): \(String(cString: strerror(code)))"
        case .notReaped(let pid): "process \(pid) did not end even after SIGKILL"
        }
    }
}

enum ChildProcess {
    /// Starts `executable` with `arguments`; stdin is /dev/null, stdout and
    /// stderr go to the given files (created or truncated). Signal dispositions
    /// and mask are reset to defaults in the child (the harness ignores SIGINT).
    static func spawn(
        executable: String, arguments: [String], stdoutPath: String, stderrPath: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw ChildProcessError.spawnFailed(executable, rc) }
        return pid
    }

    /// Waits for `pid` to end, at most `timeout` seconds; past that it is sent
    /// SIGKILL and reaped. Returns its exit and rusage.
    static func wait(for pid: pid_t, timeout: Double) throws -> ChildExit {
        let slot = ExitSlot()
        let done = DispatchSemaphore(value: 0)
        let waiter = Thread {
            var status: Int32 = 0
            var usage = rusage()
            var result: pid_t = -1
            // Bounded: EINTR is the only retry, and the child is killed on timeout.
            for _ in 0..<1_000 {
                result = wait4(pid, &status, 0, &usage)
                if result >= 0 || errno != EINTR { break }
            }
            if result == pid {
                slot.value.withLock { $0 = ChildExit(status: status, usage: usage) }
            }
            done.signal()
        }
        waiter.start()
        var timedOut = false
        if done.wait(timeout: .now() + timeout) == .timedOut {
            timedOut = true
            kill(pid, SIGKILL)
            guard done.wait(timeout: .now() + 10) == .success else { throw ChildProcessError.notReaped(pid) }
        }
        guard var exit = slot.value.withLock({ $0 }) else { throw ChildProcessError.notReaped(pid) }
        exit.timedOut = timedOut
        return exit
    }

    /// Non-blocking check: the exit if `pid` has already ended (and reaps it).
    static func exitIfEnded(_ pid: pid_t) -> ChildExit? {
        var status: Int32 = 0
        var usage = rusage()
        guard wait4(pid, &status, WNOHANG, &usage) == pid else { return nil }
        return ChildExit(status: status, usage: usage)
    }

    /// Runs a short command to completion and returns its exit and its
    /// stdout+stderr text (written to `scratchDirectory`).
    static func run(
        _ executable: String, _ arguments: [String], scratchDirectory: String, timeout: Double = 60
    ) throws -> (exit: ChildExit, output: String) {
        let name = URL(fileURLWithPath: executable).lastPathComponent
        let stdoutPath = scratchDirectory + "/\(name).out"
        let stderrPath = scratchDirectory + "/\(name).err"
        let pid = try spawn(executable: executable, arguments: arguments, stdoutPath: stdoutPath, stderrPath: stderrPath)
        let exit = try wait(for: pid, timeout: timeout)
        let output = [stdoutPath, stderrPath]
            .compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }
            .joined()
        return (exit, output)
    }

    /// Finds an executable by name on PATH and in the usual sbin folders.
    static func locate(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin", "/sbin"]
        return folders.map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
    }
}

/// Where the waiting thread leaves the exit for the caller.
private final class ExitSlot: Sendable {
    let value = Mutex<ChildExit?>(nil)
}

extension ChildExit {
    /// Decodes a wait status (the WIFEXITED/WEXITSTATUS/WTERMSIG macros, which
    /// Swift does not import) and the rusage.
    init(status: Int32, usage: rusage) {
        let low = status & 0x7f
        exitCode = low == 0 ? (status >> 8) & 0xff : nil
        signal = low != 0 && low != 0x7f ? low : nil
        userSeconds = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        systemSeconds = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        maxRSSKiB = Int(usage.ru_maxrss)
    }
}
