import Foundation
import TestSupport

/// Runs a program of this build (e.g. `fetch`) with its output discarded and
/// its own peak memory measured (`TestSupport.ChildProcess`), so tests
/// running in parallel in this process cannot blur the figure.
func runBuiltProduct(_ name: String, _ arguments: [String]) async throws -> ChildProcessResult {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: executable) else {
        throw ChildProcessError("\(executable) is not built; `swift test` builds every product")
    }
    return try await ChildProcess.run(executable, arguments, discardingOutput: true, measuringPeakMemory: true)
}

struct ChildProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
