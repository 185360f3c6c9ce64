import Foundation
import Testing

/// The path of the `fetch` CLI built beside the test bundle; the test fails
/// with a hint when it was not built.
func fetchExecutablePath() throws -> String {
    let fetch = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("fetch")
    try #require(FileManager.default.isExecutableFile(atPath: fetch.path), "build the fetch product first")
    return fetch.path
}
