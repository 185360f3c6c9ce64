import Foundation
import Synchronization

/// The requests and retries each origin received lately, for the retry
/// budgets (`RetryBudget`) of one session. Counted in two windows, the
/// current one and the one before, weighted by how much of it is still
/// inside the last `window` seconds: a sliding count in constant memory.
///
/// Only tasks with a retry policy count here; a session without one never
/// touches it.
final class RetryLedger: Sendable {
    private struct Counts {
        var windowStart: Double = 0
        var requests = 0
        var retries = 0
        var previousRequests = 0
        var previousRetries = 0

        /// Moves the windows on to `now`.
        mutating func advance(to now: Double, window: Double) {
            let elapsed = now - windowStart
            if elapsed < window { return }
            if elapsed < 2 * window {
                (previousRequests, previousRetries) = (requests, retries)
                windowStart += window
            } else {
                (previousRequests, previousRetries) = (0, 0)
                windowStart = now
            }
            (requests, retries) = (0, 0)
        }

        /// Requests and retries in the last `window` seconds, estimated.
        func recent(now: Double, window: Double) -> (requests: Double, retries: Double) {
            let weight = max(0, 1 - (now - windowStart) / window)
            return (Double(requests) + weight * Double(previousRequests),
                    Double(retries) + weight * Double(previousRetries))
        }
    }

    private let origins = Mutex<[String: Counts]>([:])

    /// A first attempt went to `origin`.
    func noteRequest(to origin: String, budget: RetryBudget, now: Double = ProcessInfo.processInfo.systemUptime) {
        origins.withLock { origins in
            origins[origin, default: Counts(windowStart: now)].advance(to: now, window: budget.window)
            origins[origin]!.requests += 1
        }
    }

    /// Takes a retry to `origin` from its budget: false when the budget is
    /// spent (the retry must not happen).
    func takeRetry(to origin: String, budget: RetryBudget, now: Double = ProcessInfo.processInfo.systemUptime) -> Bool {
        origins.withLock { origins in
            var counts = origins[origin] ?? Counts(windowStart: now)
            counts.advance(to: now, window: budget.window)
            let recent = counts.recent(now: now, window: budget.window)
            let allowed = max(Double(budget.minimumRetries), budget.ratio * recent.requests)
            guard recent.retries + 1 <= allowed else {
                origins[origin] = counts
                return false
            }
            counts.retries += 1
            origins[origin] = counts
            return true
        }
    }

    /// The origin a budget counts: scheme, host and port.
    static func origin(of url: URL?) -> String {
        guard let url else { return "" }
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
