import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// When a background transfer that failed on the network is tried again:
/// the foreground's `RetryPolicy` (one type for both), used as the agent
/// needs it: pauses that double from `initialBackoff` up to
/// `maximumBackoff`, as long as the pause ends before `maximumTotalTime`
/// (the resource timeout, counted from the transfer's creation, across
/// every attempt), with no limit on attempts, no jitter and no budget (one
/// transfer at a time per origin, resumed with Range, not a retry storm).
/// Other errors end it.
package struct RetrySchedule: Sendable, Equatable {
    package typealias Policy = RetryPolicy

    package enum Decision: Sendable, Equatable {
        case retry(after: Double)
        case fail
    }

    package let policy: Policy
    private var retries = 0

    package init(_ policy: Policy) {
        self.policy = policy
    }

    /// The decision after `error`, `elapsed` seconds into the transfer.
    package mutating func next(after error: URLError, elapsed: Double) -> Decision {
        let pause = policy.backoff(beforeRetry: retries + 1)
        guard Self.isRetryable(error), retries + 1 < policy.maximumAttempts, elapsed + pause < policy.maximumTotalTime
        else { return .fail }
        retries += 1
        return .retry(after: pause)
    }

    /// Errors another attempt can cure: the network, not the request (a
    /// garbled response too: a proxy or a server restarting mid-answer).
    /// Wider than the foreground's: a background transfer resumes where it
    /// stopped, so a time-out after connecting is worth another attempt.
    package static func isRetryable(_ error: URLError) -> Bool {
        error.code.isTransientNetworkFailure || error.code == .badServerResponse
    }
}

extension RetryPolicy {
    /// The agent's schedule: from `firstPause`, doubling up to
    /// `longestPause`, until `resourceTimeout`.
    package static func background(
        firstPause: Double = 1, longestPause: Double = 60, resourceTimeout: Double = 7 * 86_400
    ) -> RetryPolicy {
        RetryPolicy(
            maximumAttempts: .max, maximumTotalTime: resourceTimeout, initialBackoff: firstPause,
            backoffMultiplier: 2, maximumBackoff: longestPause, jitter: 0, budget: nil)
    }
}
