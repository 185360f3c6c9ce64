import Foundation

/// `waitsForConnectivity` as a value: the tries made so far, and what a
/// failed hop leads to. Linux has no reachability monitor a library can rely
/// on, so waiting is retrying: pauses of 0.25 s doubling up to 5 s, the last
/// one ending at the resource timeout with one more try.
///
/// Driven by `TaskCore` under the task's lock; tested as a table without a
/// network (`ConnectivityRetryTests`).
struct ConnectivityRetry {
    /// The longest pause between two attempts.
    static let longestPause = 5.0

    /// Tries made after a connectivity failure (0: never waited).
    private(set) var retries = 0

    enum Action: Equatable {
        /// Not something waiting cures: the task fails with the error.
        case fail
        /// Try the hop again after `pause` seconds; `announce` on the first
        /// wait (handlers and an events consumer hear it once).
        case retry(after: Double, announce: Bool)
        /// The resource timeout is up: the task fails with `timedOut`.
        case outOfTime
    }

    /// A hop failed with `code`, `elapsed` seconds into the task.
    /// - Parameter responseBegun: a response was published already (then a
    ///   retry would repeat it).
    mutating func hopFailed(
        _ code: URLError.Code, elapsed: Double, resourceTimeout: Double, responseBegun: Bool
    ) -> Action {
        let bounded = resourceTimeout > 0 && resourceTimeout.isFinite
        // A hop runs with the whole resource timeout as libcurl's limit, so
        // one that started late (the last try, or a stalled machine) can end
        // with libcurl's own time-out, still connecting, just as the
        // resource time is up: that is the waiting's end too.
        let timedOutAtTheEnd = code == .timedOut && bounded && elapsed >= resourceTimeout - 0.01
        guard Self.isConnectivityFailure(code) || timedOutAtTheEnd, !responseBegun else { return .fail }
        retries += 1
        var pause = min(0.25 * pow(2, Double(min(retries - 1, 16))), Self.longestPause)
        if bounded { pause = min(pause, resourceTimeout - elapsed) }
        if bounded, pause <= 0.01 { return .outOfTime }
        return .retry(after: pause, announce: retries == 1)
    }

    /// Whether waiting can cure a failure: the server could not be reached
    /// at all (nothing was sent, nothing received).
    static func isConnectivityFailure(_ code: URLError.Code) -> Bool {
        switch code {
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
            return true
        default:
            return false
        }
    }
}
