import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `waitsForConnectivity`: a hop that could not reach its server is tried
/// again after a pause instead of failing the task, until the resource
/// timeout. Linux has no reachability monitor a library can rely on, so
/// waiting is retrying: pauses of 0.25 s doubling up to 5 s.
extension TaskCore {
    /// The longest pause between two attempts.
    static let longestConnectivityPause = 5.0

    /// Whether `error` is one that waiting can cure: the server could not
    /// be reached at all (nothing was sent, nothing received).
    static func isConnectivityFailure(_ error: URLError) -> Bool {
        switch error.code {
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
            return true
        default:
            return false
        }
    }

    /// Schedules the current hop again after a pause and returns true, or
    /// returns false when the task should fail with `error` now (another
    /// kind of failure, a response already begun, or no time left).
    func waitForConnectivity(after error: URLError) -> Bool {
        let resourceTimeout = context.configuration.timeoutIntervalForResource
        let elapsed = Date().timeIntervalSince(createdAt)
        // A hop runs with the whole resource timeout as libcurl's limit, so
        // one that started late (the last try, or a stalled machine) can end
        // with libcurl's own time-out, still connecting, just as the
        // resource time is up: that is the waiting's end too.
        let outOfTime = error.code == .timedOut && resourceTimeout.isFinite && resourceTimeout > 0
            && elapsed >= resourceTimeout - 0.01
        guard Self.isConnectivityFailure(error) || outOfTime else { return false }
        let plan = guarded.withLock { guarded -> (request: URLRequest, credential: HopCredential?, retry: Int)? in
            guard guarded.pipeline.responseSource == nil else { return nil }
            guarded.connectivityRetries += 1
            return (guarded.hop.request, guarded.hop.credential, guarded.connectivityRetries)
        }
        guard let plan else { return false }
        var pause = min(0.25 * pow(2, Double(min(plan.retry - 1, 16))), Self.longestConnectivityPause)
        let bounded = resourceTimeout > 0 && resourceTimeout.isFinite
        // The last pause ends at the resource timeout, with one more try.
        if bounded { pause = min(pause, resourceTimeout - elapsed) }
        if bounded, pause <= 0.01 {
            completeWithTransactions(error: URLError.make(
                .timedOut, url: failingURLString,
                reason: "Waited for connectivity until the resource timeout (\(resourceTimeout) s); "
                    + "the last attempt failed: \(error.localizedDescription)"))
            return true
        }
        if plan.retry == 1 { announceWaitingForConnectivity() }
        log?.decision("waiting for connectivity", "retry \(plan.retry) in \(pause) s")
        DispatchQueue.global().asyncAfter(deadline: .now() + pause) { [weak self] in
            // A task cancelled meanwhile has ended: its hop does not start.
            self?.startHop(plan.request, credential: plan.credential)
        }
        return true
    }

    /// Tells the handlers, then an events consumer, once.
    private func announceWaitingForConnectivity() {
        let publish: @Sendable () -> Void = { [self] in
            let wake = guarded.withLock { guarded -> Wake? in
                Self.wake(for: guarded.pipeline.offer(.waitingForConnectivity), in: &guarded)
            }
            wake?.run(by: self)
        }
        let handlers = [delegate, context.delegate].compactMap { $0 }
        guard !handlers.isEmpty, let owner = guarded.withLock({ $0.owner }) else {
            publish()
            return
        }
        Task {
            for handler in handlers { await handler.taskIsWaitingForConnectivity(owner) }
            publish()
        }
    }
}
