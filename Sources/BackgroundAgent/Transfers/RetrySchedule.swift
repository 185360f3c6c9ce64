import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// When a background transfer that failed on the network is tried again:
/// after a pause that doubles from `firstPause` up to `longestPause`, as
/// long as the pause ends before the resource timeout (counted from the
/// transfer's creation, across every attempt). Other errors end it.
package struct RetrySchedule: Sendable, Equatable {
    package struct Policy: Sendable, Equatable {
        package var firstPause: Double
        package var longestPause: Double
        package var resourceTimeout: Double

        package init(firstPause: Double = 1, longestPause: Double = 60, resourceTimeout: Double = 7 * 86_400) {
            self.firstPause = firstPause
            self.longestPause = longestPause
            self.resourceTimeout = resourceTimeout
        }
    }

    package enum Decision: Sendable, Equatable {
        case retry(after: Double)
        case fail
    }

    package let policy: Policy
    private var pause: Double

    package init(_ policy: Policy) {
        self.policy = policy
        pause = policy.firstPause
    }

    /// The decision after `error`, `elapsed` seconds into the transfer.
    package mutating func next(after error: URLError, elapsed: Double) -> Decision {
        guard Self.isRetryable(error), elapsed + pause < policy.resourceTimeout else { return .fail }
        defer { pause = min(pause * 2, policy.longestPause) }
        return .retry(after: pause)
    }

    /// Errors another attempt can cure: the network, not the request (a
    /// garbled response too: a proxy or a server restarting mid-answer).
    package static func isRetryable(_ error: URLError) -> Bool {
        error.code.isTransientNetworkFailure || error.code == .badServerResponse
    }
}
