import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `waitsForConnectivity`: a hop that could not reach its server is tried
/// again after a pause instead of failing the task, until the resource
/// timeout. When and how often is `ConnectivityRetry`'s to say; this carries
/// out its answer.
enum ConnectivityWaiting {
    /// Schedules the current hop again after a pause and returns true, or
    /// returns false when the task should fail with `error` now (another
    /// kind of failure, a response already begun).
    static func wait(after error: URLError, on task: some PolicyHost) -> Bool {
        let resourceTimeout = task.context.configuration.timeoutIntervalForResource
        let elapsed = Date().timeIntervalSince(task.createdAt)
        let (action, request, credential) = task.machine {
            $0.connectivityHopFailed(error.code, elapsed: elapsed, resourceTimeout: resourceTimeout)
        }
        switch action {
        case .fail:
            return false
        case .outOfTime:
            task.completeWithTransactions(error: URLError.make(
                .timedOut, url: task.failingURLString,
                reason: "Waited for connectivity until the resource timeout (\(resourceTimeout) s); "
                    + "the last attempt failed: \(error.localizedDescription)"))
            return true
        case .retry(let pause, let announce):
            if announce {
                // Once: the handlers, then an events consumer.
                task.announce(.waitingForConnectivity, consumerFirst: false) { handler, task in
                    await handler.taskIsWaitingForConnectivity(task)
                }
            }
            task.log?.decision("waiting for connectivity", "retry in \(pause) s")
            DispatchQueue.global().asyncAfter(deadline: .now() + pause) { [weak task] in
                // A task cancelled meanwhile has ended: its hop does not start.
                task?.startHop(request, credential: credential)
            }
            return true
        }
    }
}
