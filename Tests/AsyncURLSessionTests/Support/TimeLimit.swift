import Foundation

struct TimeLimitExceeded: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "the test did not finish within \(seconds) s" }
}

/// Runs `body`, failing with `TimeLimitExceeded` if it takes longer than
/// `seconds`, so a hang fails the test instead of blocking CI.
func withTimeLimit<T: Sendable>(
    _ seconds: Double = 30, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimeLimitExceeded(seconds: seconds)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TimeLimitExceeded(seconds: seconds) }
        return first
    }
}
