import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a child program did: its exit status (128 + the signal when it was
/// killed) and what it printed.
public struct ChildProcessResult: Sendable {
    public let status: Int32
    public let output: Data
    public let errors: Data
    /// The child's own peak resident memory in bytes (`measuringPeakMemory`; else 0).
    public var peakResidentBytes = 0

    public var outputText: String { String(decoding: output, as: UTF8.self) }
    public var errorText: String { String(decoding: errors, as: UTF8.self) }
}

/// Runs a program for a test, with posix_spawn.
///
/// Why not Foundation.Process: on this toolchain `Process.run()` finds the
/// highest open descriptor by reading /proc/self/fd and copies each
/// directory entry as a whole `dirent`, reading past the end of glibc's
/// 32 KiB directory buffer. With about 1,360 descriptors open (the suite's
/// parallel servers) the last entry sits at the buffer's end, and the copy
/// can touch an unmapped page: the test process died with SIGSEGV in
/// `memmove` (CI, stop 39; swift-corelibs-foundation fixed it later, see
/// `findMaximumOpenFromProcSelfFD`). posix_spawn reads no directory; the
/// child closes every descriptor above 2 itself (`addclosefrom_np`), so it
/// holds none of the suite's sockets.
public enum ChildProcess {
    /// Runs `executable` with `arguments` (argv[0] is added), `input` as its
    /// standard input, and returns when it exits. Cancelling the calling
    /// task sends it SIGTERM.
    /// - Parameters:
    ///   - discardingOutput: its standard output goes to /dev/null (a body
    ///     of hundreds of MiB), not to `output`.
    ///   - measuringPeakMemory: polls the child's VmHWM until it exits:
    ///     its own peak, which ru_maxrss is not (on exec Linux folds the old
    ///     image's peak, this test process's, into the new one's).
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        workingDirectory: String? = nil, input: Data = Data(), discardingOutput: Bool = false,
        measuringPeakMemory: Bool = false
    ) async throws -> ChildProcessResult {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Files, not pipes: a child that prints much cannot block on a full
        // pipe nobody reads, and its input ends where the file ends.
        let inputFile = folder.appendingPathComponent("stdin")
        let outputFile = folder.appendingPathComponent("stdout")
        let errorFile = folder.appendingPathComponent("stderr")
        try input.write(to: inputFile)
        let pid = try await spawnRetryingWhileBusy(
            executable, [executable] + arguments, environment: environment, workingDirectory: workingDirectory,
            input: inputFile.path, output: discardingOutput ? "/dev/null" : outputFile.path, errors: errorFile.path)
        let (status, peakKiB): (Int32, Int) = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // waitpid blocks: on a thread of its own, not the cooperative pool.
                Thread {
                    continuation.resume(returning: measuringPeakMemory ? waitMeasuring(pid) : (waitForExit(pid), 0))
                }.start()
            }
        } onCancel: {
            kill(pid, SIGTERM)
        }
        var result = ChildProcessResult(
            status: status,
            output: discardingOutput ? Data() : (try? Data(contentsOf: outputFile)) ?? Data(),
            errors: (try? Data(contentsOf: errorFile)) ?? Data())
        result.peakResidentBytes = peakKiB * 1024
        return result
    }

    /// The exit status and the highest VmHWM seen (KiB), polled every 20 ms
    /// (the peak is exact to within the last 20 ms: VmHWM never decreases).
    private static func waitMeasuring(_ pid: pid_t) -> (Int32, Int) {
        var status: Int32 = 0
        var peakKiB = 0
        // Bounded by the child, which the test's time limit bounds.
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { return (-1, peakKiB) }
            peakKiB = max(peakKiB, highWaterMarkKiB(of: pid))
            usleep(20_000)
        }
        return ((status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f), peakKiB)
    }

    private static func highWaterMarkKiB(of pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        }
        return 0
    }

    /// A program a test has just written can be "busy" for a moment: a
    /// child another test spawned between the write's open and its close
    /// holds a copy of the write descriptor until its own exec closes it
    /// (O_CLOEXEC narrows that window, it cannot close it). So ETXTBSY is
    /// retried, for at most about two seconds.
    private static func spawnRetryingWhileBusy(
        _ executable: String, _ arguments: [String], environment: [String: String]?, workingDirectory: String?,
        input: String, output: String, errors: String
    ) async throws -> pid_t {
        for _ in 0..<40 {
            do {
                return try spawn(
                    executable, arguments, environment: environment, workingDirectory: workingDirectory,
                    input: input, output: output, errors: errors)
            } catch let error as NSError where error.domain == NSPOSIXErrorDomain && error.code == Int(ETXTBSY) {
                try await Task.sleep(nanoseconds: 50_000_000)
            }
        }
        return try spawn(
            executable, arguments, environment: environment, workingDirectory: workingDirectory,
            input: input, output: output, errors: errors)
    }

    private static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String]?, workingDirectory: String?,
        input: String, output: String, errors: String
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard let closeFrom = Self.addCloseFrom, let changeDirectory = Self.addChangeDirectory else {
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSYS), userInfo: [
                NSLocalizedDescriptionKey: "this glibc lacks posix_spawn_file_actions_addclosefrom_np (2.34+)",
            ])
        }
        _ = closeFrom(&actions, 3)
        if let workingDirectory { _ = changeDirectory(&actions, workingDirectory) }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentStrings = environment.map { $0.map { "\($0.key)=\($0.value)" } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environmentStrings.map { $0.map { strdup($0) } + [nil] }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let result = envp.map { envp in posix_spawn(&pid, executable, &actions, nil, argv, envp) }
            ?? posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard result == 0 else {
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(result), userInfo: [
                NSLocalizedDescriptionKey: "cannot start \(executable): \(String(cString: strerror(result)))",
            ])
        }
        return pid
    }

    // glibc declares these two only for _GNU_SOURCE, which Swift's Glibc
    // module is not built with: found at run time (glibc 2.34 and later).
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias AddChangeDirectory = @convention(c) (
        UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>
    ) -> Int32
    private static let addCloseFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }
    private static let addChangeDirectory = dlsym(nil, "posix_spawn_file_actions_addchdir_np")
        .map { unsafeBitCast($0, to: AddChangeDirectory.self) }

    /// The exit status of a child (128 + signal when it was killed).
    private static func waitForExit(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
