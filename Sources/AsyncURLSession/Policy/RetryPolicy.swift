import Foundation

/// When a task sends its request again by itself, and how long it waits
/// first. None by default (URLSession's behaviour: a failure is the
/// task's); set one on `SessionConfiguration.retryPolicy` or on a task
/// (`SessionTask.retryPolicy`), or take `.standard`.
///
/// A request is retried only when sending it again cannot do harm twice:
/// - its method is idempotent (RFC 9110 §9.2.2: GET, HEAD, OPTIONS, TRACE,
///   PUT, DELETE), or it carries an `Idempotency-Key` header, or the policy
///   says `retriesNonIdempotentRequests`;
/// - its body can be sent again: data and files always, a body stream
///   only where someone can answer the `needBodyStream` decision (an events
///   consumer or a delegate);
/// - nothing of the response reached the caller yet.
///
/// It is retried after a failure before any response (the connection was
/// refused, reset or lost, the host was not found, connecting timed out)
/// or after a response whose status is in `retryableStatusCodes` (429 and
/// 503 by default), waiting as its `Retry-After` asks, up to
/// `maximumRetryAfter`. Pauses grow from `initialBackoff` by
/// `backoffMultiplier` up to `maximumBackoff`, each shortened by a random
/// part of up to `jitter` of itself so many clients do not come back at
/// once. No attempt starts after `maximumTotalTime` (from the task's start)
/// or the resource timeout. A `budget` keeps a failing origin from
/// receiving much more than its usual load.
///
/// Every attempt is a transaction of the task's metrics and a client span
/// of its own beneath the task's span; an events consumer sees
/// `.retrying(RetryAttempt)` between two attempts, a delegate
/// `task(_:willRetry:)`.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included (3: the first and two retries).
    public var maximumAttempts: Int
    /// No attempt starts later than this after the task started.
    public var maximumTotalTime: TimeInterval
    /// The pause before the first retry.
    public var initialBackoff: TimeInterval
    /// Each pause is the one before times this.
    public var backoffMultiplier: Double
    /// The longest pause (before jitter).
    public var maximumBackoff: TimeInterval
    /// Up to this fraction of each pause is taken off at random (0: none,
    /// 1: anywhere from no pause to the whole pause).
    public var jitter: Double
    /// Response statuses answered by another attempt.
    public var retryableStatusCodes: Set<Int>
    /// A `Retry-After` longer than this is shortened to it.
    public var maximumRetryAfter: TimeInterval
    /// Retry POST, PATCH and other methods that are not idempotent even
    /// without an `Idempotency-Key` header: only for servers known to
    /// tolerate a request received twice.
    public var retriesNonIdempotentRequests: Bool
    /// At most this many retries per origin beyond a share of the requests;
    /// nil: no budget.
    public var budget: RetryBudget?

    public init(
        maximumAttempts: Int = 3,
        maximumTotalTime: TimeInterval = 60,
        initialBackoff: TimeInterval = 0.2,
        backoffMultiplier: Double = 2,
        maximumBackoff: TimeInterval = 10,
        jitter: Double = 0.5,
        retryableStatusCodes: Set<Int> = [429, 503],
        maximumRetryAfter: TimeInterval = 30,
        retriesNonIdempotentRequests: Bool = false,
        budget: RetryBudget? = RetryBudget()
    ) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.maximumTotalTime = maximumTotalTime
        self.initialBackoff = max(0, initialBackoff)
        self.backoffMultiplier = max(1, backoffMultiplier)
        self.maximumBackoff = max(0, maximumBackoff)
        self.jitter = min(max(jitter, 0), 1)
        self.retryableStatusCodes = retryableStatusCodes
        self.maximumRetryAfter = max(0, maximumRetryAfter)
        self.retriesNonIdempotentRequests = retriesNonIdempotentRequests
        self.budget = budget
    }

    /// Three attempts, pauses from 0.2 s, 429 and 503 retried, the
    /// default budget.
    public static let standard = RetryPolicy()

    /// `standard`, and 502 and 504 too (a gateway that could not reach, or
    /// waited too long for, the server behind it).
    public static let includingGatewayErrors = RetryPolicy(retryableStatusCodes: [429, 502, 503, 504])

    /// The pause before retry number `retry` (1 for the first), before
    /// jitter.
    package func backoff(beforeRetry retry: Int) -> TimeInterval {
        let grown = initialBackoff * pow(backoffMultiplier, Double(min(max(retry - 1, 0), 30)))
        return min(grown, maximumBackoff)
    }

    /// `pause` with its random part taken off; `random` in 0..<1.
    func jittered(_ pause: TimeInterval, random: Double) -> TimeInterval {
        pause * (1 - jitter * random)
    }
}

/// How many retries an origin may receive: at least `minimumRetries` per
/// `window`, more when many requests went to it, up to `ratio` of them
/// (0.2: one retry for every five requests). Counted per session and per
/// origin (scheme, host, port), over the last `window` seconds; a retry
/// the budget refuses leaves the task with the failure it had.
public struct RetryBudget: Sendable, Hashable {
    public var ratio: Double
    public var minimumRetries: Int
    public var window: TimeInterval

    public init(ratio: Double = 0.2, minimumRetries: Int = 10, window: TimeInterval = 10) {
        self.ratio = max(0, ratio)
        self.minimumRetries = max(0, minimumRetries)
        self.window = max(0.001, window)
    }
}
