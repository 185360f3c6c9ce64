import Foundation
import Synchronization

public struct TimeLimitExceeded: Error, CustomStringConvertible {
    public let seconds: Double
    public var description: String { "the test did not finish within \(seconds) s" }
}

/// Runs `body`, failing with `TimeLimitExceeded` if it takes longer than
/// `seconds`, so a hang fails the test instead of blocking CI.
///
/// Not a task group: a group waits for its children when it returns, so a
/// body stuck on a continuation would hold the test past its limit. Here the
/// first of body and timer to finish answers; a stuck body is cancelled and
/// left behind.
public func withTimeLimit<T: Sendable>(
    _ seconds: Double = 30, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let answer = OneAnswer<T>()
    @Sendable func take() -> CheckedContinuation<T, any Error>? { answer.take() }
    return try await withCheckedThrowingContinuation { continuation in
        answer.set(continuation)
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            if !Task.isCancelled { take()?.resume(throwing: TimeLimitExceeded(seconds: seconds)) }
        }
        Task {
            let result: Result<T, any Error>
            do {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            timer.cancel()
            take()?.resume(with: result)
        }
    }
}

/// The continuation that the first finisher (body or timer) resumes.
private final class OneAnswer<T: Sendable>: Sendable {
    private let pending = Mutex<CheckedContinuation<T, any Error>?>(nil)

    func set(_ continuation: CheckedContinuation<T, any Error>) {
        pending.withLock { $0 = continuation }
    }

    func take() -> CheckedContinuation<T, any Error>? {
        pending.withLock { pending in
            defer { pending = nil }
            return pending
        }
    }
}
