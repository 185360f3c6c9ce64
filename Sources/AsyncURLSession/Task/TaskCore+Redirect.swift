internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TaskCore {
    /// A hop ended on a usable 3xx: offer the redirect, then follow or stop.
    func offerRedirect(_ held: HopState.Held, proposed: URLRequest, isDowngrade: Bool) {
        let configuration = context.configuration
        let count = guarded.withLock { $0.history.redirectCount }
        guard count < configuration.httpMaximumRedirects else {
            completeWithTransactions(error: URLError.make(
                .httpTooManyRedirects, url: failingURLString,
                reason: "The server redirected more than \(configuration.httpMaximumRedirects) times "
                    + "(httpMaximumRedirects); the last Location was \(proposed.url?.absoluteString ?? "?")."))
            return
        }
        // https -> http is never followed silently: it would expose the
        // request (and whatever the caller put in it) in clear text.
        let followByDefault = !isDowngrade || configuration.followsInsecureRedirects
        let decision = RedirectDecision(
            response: held.response, proposedRequest: proposed,
            defaultAnswer: followByDefault ? .follow(proposed) : .stop)
        decision.core.onSettle { [weak self] answer in
            guard let self else { return }
            log?.decision("redirect", answer.logDescription)
            switch answer {
            case .follow(let request):
                guarded.withLock { $0.history.followedRedirect() }
                startHop(request, credential: nil)
            case .stop:
                stopAtHeldResponse(held)
            }
        }
        offerDecision(.redirect(decision), decision.core) { handler, task in
            await handler.task(task, willPerformRedirection: decision)
        }
    }

    /// The held 3xx/401/407 and its body become the task's result. The hop is
    /// over, so the task ends right after the response is published.
    func stopAtHeldResponse(_ held: HopState.Held) {
        // A proxy's refused CONNECT has no response to deliver: its error ends the task.
        if let error = held.connectFailure {
            guarded.withLock { $0.hop.releaseHeld() }
            completeWithTransactions(error: error)
            return
        }
        guarded.withLock { $0.deliverHeldAfterAll() }
        deliverFinalResponse(held.response, heldBody: held.body)
    }
}
