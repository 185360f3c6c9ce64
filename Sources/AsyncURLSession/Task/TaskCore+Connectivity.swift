import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `waitsForConnectivity`: a hop that could not reach its server is tried
/// again after a pause instead of failing the task, until the resource
/// timeout. When and how often is `ConnectivityRetry`'s to say; this carries
/// out its answer.
extension TaskCore {
    /// Schedules the current hop again after a pause and returns true, or
    /// returns false when the task should fail with `error` now (another
    /// kind of failure, a response already begun).
    func waitForConnectivity(after error: URLError) -> Bool {
        let resourceTimeout = context.configuration.timeoutIntervalForResource
        let elapsed = Date().timeIntervalSince(createdAt)
        let (action, request, credential) = guarded.withLock {
            $0.connectivityHopFailed(error.code, elapsed: elapsed, resourceTimeout: resourceTimeout)
        }
        switch action {
        case .fail:
            return false
        case .outOfTime:
            completeWithTransactions(error: URLError.make(
                .timedOut, url: failingURLString,
                reason: "Waited for connectivity until the resource timeout (\(resourceTimeout) s); "
                    + "the last attempt failed: \(error.localizedDescription)"))
            return true
        case .retry(let pause, let announce):
            if announce { announceWaitingForConnectivity() }
            log?.decision("waiting for connectivity", "retry in \(pause) s")
            DispatchQueue.global().asyncAfter(deadline: .now() + pause) { [weak self] in
                // A task cancelled meanwhile has ended: its hop does not start.
                self?.startHop(request, credential: credential)
            }
            return true
        }
    }

    /// Tells the handlers, then an events consumer, once.
    private func announceWaitingForConnectivity() {
        let publish: @Sendable () -> Void = { [self] in
            let wake = guarded.withLock { $0.offer(.waitingForConnectivity).wake }
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
