import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the retry policy reads of a task when one of its hops ended. A
/// value, so the rules are table-tested without a task or a network.
struct RetryCandidate {
    var policy: RetryPolicy
    /// Attempts sent under the policy so far, the one that just ended
    /// included.
    var attemptsMade: Int
    /// Seconds since the task started.
    var elapsed: TimeInterval
    /// `timeoutIntervalForResource`: no attempt starts after it.
    var resourceTimeout: TimeInterval
    var method: String
    var hasIdempotencyKey: Bool
    /// The body can be sent again (see `RetryPolicy`).
    var bodyReplayable: Bool
    /// Part of the response reached the caller: a retry would repeat it.
    var responseBegun: Bool
    /// The failed hop had connected to the server (a time-out after that
    /// is the server's slowness, not an unreachable host).
    var connected: Bool
    /// In 0..<1, for the jitter.
    var random: Double
    /// For a `Retry-After` date.
    var now: Date
}

/// Why a task sends its request again.
public enum RetryReason: Sendable {
    /// The attempt failed before any response.
    case failure(URLError)
    /// The attempt's response had a retryable status (429, 503...).
    case status(HTTPURLResponse)
}

/// An attempt ended and another follows: what an events consumer sees
/// (`TaskEvent.retrying`) and a delegate is told (`task(_:willRetry:)`).
public struct RetryAttempt: Sendable {
    /// The number of the attempt that follows (2 for the first retry).
    public let attempt: Int
    /// Seconds until it starts.
    public let delay: TimeInterval
    /// Why the last one did not do.
    public let reason: RetryReason
}

/// The retry policy's rules: whether a hop's end is tried again, and when.
enum RetryRules {
    /// The retry that follows `end` (a failure, or a response held because
    /// its status is retryable), or nil for none.
    static func plan(after end: HopEnd, held: HopState.Held?, _ candidate: RetryCandidate) -> RetryAttempt? {
        let policy = candidate.policy
        guard candidate.attemptsMade < policy.maximumAttempts, !candidate.responseBegun, candidate.bodyReplayable,
            isIdempotent(candidate.method) || candidate.hasIdempotencyKey || policy.retriesNonIdempotentRequests
        else { return nil }
        let reason: RetryReason
        var asked: TimeInterval?
        switch end {
        case .failure(let error):
            guard isRetryable(error.code, connected: candidate.connected) else { return nil }
            reason = .failure(error)
        case .success:
            guard let held, case .retryableStatus = held.kind else { return nil }
            reason = .status(held.response)
            asked = retryAfter(held.response, now: candidate.now)
        case .tlsChallenge, .proxyRefusedConnect:
            return nil
        }
        let delay = asked.map { min($0, policy.maximumRetryAfter) }
            ?? policy.jittered(policy.backoff(beforeRetry: candidate.attemptsMade), random: candidate.random)
        let startsAt = candidate.elapsed + delay
        let resourceBounded = candidate.resourceTimeout > 0 && candidate.resourceTimeout.isFinite
        guard startsAt < policy.maximumTotalTime, !resourceBounded || startsAt < candidate.resourceTimeout
        else { return nil }
        return RetryAttempt(attempt: candidate.attemptsMade + 1, delay: delay, reason: reason)
    }

    /// RFC 9110 §9.2.2.
    static func isIdempotent(_ method: String) -> Bool {
        switch method {
        case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE": true
        default: false
        }
    }

    /// Failures before a response that another attempt can cure: the
    /// server could not be reached, or the connection died before it
    /// answered. A time-out counts only while connecting.
    static func isRetryable(_ code: URLError.Code, connected: Bool) -> Bool {
        switch code {
        case .networkConnectionLost, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed,
            .notConnectedToInternet:
            true
        case .timedOut:
            !connected
        default:
            false
        }
    }

    /// `Retry-After` in seconds from `now`: a number of seconds or an HTTP
    /// date (RFC 9110 §10.2.3); nil when absent or unreadable.
    static func retryAfter(_ response: HTTPURLResponse, now: Date) -> TimeInterval? {
        guard let value = response.value(forHTTPHeaderField: "Retry-After")?.trimmingCharacters(in: .whitespaces),
            !value.isEmpty
        else { return nil }
        if value.allSatisfy(\.isASCIIDigit) { return TimeInterval(value.prefix(9)) }
        guard let date = CookieDate.parse(value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
