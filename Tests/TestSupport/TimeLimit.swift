import Foundation
import Testing
import Synchronization

public struct TimeLimitExceeded: Error, CustomStringConvertible {
    public let seconds: Double
    public var description: String { "the test did not finish within \(seconds) s" }
}

/// How much longer than usual the tests may take: 1 normally, more under a
/// sanitizer (`.ci/sanitize` sets `ASYNCURLSESSION_TEST_TIME_SCALE`), where
/// ThreadSanitizer runs the suite several times slower and a 30-second limit
/// would fail correct code. Only limits scale; nothing a test asserts about
/// behaviour does.
public let testTimeScale: Double = {
    guard let text = ProcessInfo.processInfo.environment["ASYNCURLSESSION_TEST_TIME_SCALE"],
          let scale = Double(text), scale >= 1 else { return 1 }
    return scale
}()

/// Runs `body`, failing with `TimeLimitExceeded` if it takes longer than
/// `seconds` (times `testTimeScale`), so a hang fails the test instead of
/// blocking CI.
///
/// Not a task group: a group waits for its children when it returns, so a
/// body stuck on a continuation would hold the test past its limit. Here the
/// first of body and timer to finish answers; a stuck body is cancelled and
/// left behind.
public func withTimeLimit<T: Sendable>(
    _ seconds: Double = 30, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let seconds = seconds * testTimeScale
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

extension TimeLimitTrait.Duration {
    /// `minutes` times `testTimeScale` (rounded up), for `.timeLimit` traits:
    /// Swift Testing's own limit, which stretches under a sanitizer as
    /// `withTimeLimit` does.
    public static func scaledMinutes(_ minutes: Int) -> Self {
        .minutes(Int64((Double(minutes) * testTimeScale).rounded(.up)))
    }
}

/// A request timeout for test sessions: `seconds` times `testTimeScale`, so
/// a transfer that is slow only because a sanitizer slows the process does
/// not time out. Tests of timeouts themselves set their own, unscaled.
public func scaledTimeout(_ seconds: Double) -> Double {
    seconds * testTimeScale
}

/// Waits until `condition` holds or `seconds` (times `testTimeScale`) have
/// passed, looking again every `interval`, and says whether it holds.
///
/// Why a deadline and not a count of naps: on a loaded machine one nap of
/// 10 ms can last far longer, so "200 naps" was never the 2 s it read as,
/// and CI outran such waits. A condition that never holds still ends the
/// wait, so the expectation after it fails instead of the test hanging.
@discardableResult
public func eventually(
    within seconds: Double = 30,
    every interval: Duration = .milliseconds(10),
    _ condition: () -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds * testTimeScale)
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: interval)
    }
    return true
}
