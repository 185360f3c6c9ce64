import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended and the most memory it held.
struct ChildResult: Sendable {
    var exitStatus: Int32
    /// Peak resident set size (ru_maxrss), in bytes.
    var peakResidentBytes: Int
    var standardError: String
}

/// Runs a program of this build (e.g. `fetch`) with stdout to /dev/null and
/// measures its own peak memory with wait4, so tests running in parallel in
/// this process cannot blur the figure.
func runBuiltProduct(_ name: String, _ arguments: [String]) async throws -> ChildResult {
    let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let executable = directory.appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: executable) else {
        throw ChildProcessError("\(executable) is not built; `swift test` builds every product")
    }
    let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString).err")
    defer { try? FileManager.default.removeItem(at: errorFile) }
    let result = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ChildResult, any Error>) in
        // wait4 blocks: do it on a thread of its own, not the cooperative pool.
        let thread = Thread {
            continuation.resume(with: Result { try spawnAndWait(executable, arguments, errorPath: errorFile.path) })
        }
        thread.start()
    }
    var withError = result
    withError.standardError = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
    return withError
}

private func spawnAndWait(_ executable: String, _ arguments: [String], errorPath: String) throws -> ChildResult {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard spawned == 0 else { throw ChildProcessError("posix_spawn \(executable) failed: \(spawned)") }
    // ru_maxrss would include this (test) process's memory: on exec Linux
    // folds the old image's peak into the new one's. VmHWM belongs to the
    // new image only and never decreases, so polling it until exit gives the
    // child's own peak (to within the last 20 ms).
    var status: Int32 = 0
    var peakKiB = 0
    while true {
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid { break }
        if reaped < 0 && errno != EINTR { throw ChildProcessError("waitpid failed: \(errno)") }
        peakKiB = max(peakKiB, highWaterMarkKiB(of: pid))
        usleep(20_000)
    }
    let exited = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return ChildResult(exitStatus: exited, peakResidentBytes: peakKiB * 1024, standardError: "")
}

private func highWaterMarkKiB(of pid: pid_t) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return line.split(separator: " ").compactMap { Int($0) }.first ?? 0
    }
    return 0
}

struct ChildProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
