import ArgumentParser
import AsyncURLSession
import Foundation

/// Retries and the connect timeout, in curl's words: --retry,
/// --retry-max-time, --retry-delay, --connect-timeout.
struct RetryOptions: ParsableArguments {
    @Option(name: .customLong("retry"), help: "Retry a failure before any response, or a 408, 429, 500, 502, 503 or 504, up to this many times (idempotent methods, or with an Idempotency-Key header).")
    var retries: Int?

    @Option(name: .customLong("retry-max-time"), help: "Seconds from the start after which no retry begins (default 60).")
    var retryMaxTime: Double?

    @Option(name: .customLong("retry-delay"), help: "Seconds between retries, fixed (default: from 1 s, doubling; a Retry-After field wins).")
    var retryDelay: Double?

    @Option(name: .customLong("connect-timeout"), help: "Seconds to connect (DNS, TCP, TLS) before the attempt fails (default: --timeout).")
    var connectTimeout: Double?

    func validate() throws {
        if let retries, retries < 0 { throw ValidationError("--retry must not be negative.") }
        if retryMaxTime != nil || retryDelay != nil, retries == nil {
            throw ValidationError("--retry-max-time and --retry-delay need --retry N.")
        }
        if let connectTimeout, connectTimeout <= 0 { throw ValidationError("--connect-timeout must be above 0.") }
    }

    /// Sets these options on `configuration`.
    func apply(to configuration: inout SessionConfiguration) {
        if let connectTimeout { configuration.timeoutIntervalForConnect = connectTimeout }
        guard let retries, retries > 0 else { return }
        // curl's: transient failures and the statuses it calls transient;
        // one transfer, so no budget to share.
        configuration.retryPolicy = RetryPolicy(
            maximumAttempts: retries + 1,
            maximumTotalTime: retryMaxTime ?? 60,
            initialBackoff: retryDelay ?? 1,
            backoffMultiplier: retryDelay == nil ? 2 : 1,
            maximumBackoff: retryDelay ?? 600,
            jitter: 0,
            retryableStatusCodes: [408, 429, 500, 502, 503, 504],
            maximumRetryAfter: retryMaxTime ?? 60,
            budget: nil)
    }
}
