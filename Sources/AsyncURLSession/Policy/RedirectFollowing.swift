import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A hop ended on a usable 3xx (`HopPolicies.redirect`): the redirect
/// decision is offered, then the task follows it or stops at the 3xx.
enum RedirectFollowing {
    static func offer(_ held: HopState.Held, proposed: URLRequest, isDowngrade: Bool, on task: some PolicyHost) {
        let configuration = task.context.configuration
        let count = task.machine { $0.history.redirectCount }
        guard count < configuration.httpMaximumRedirects else {
            task.completeWithTransactions(error: URLError.make(
                .httpTooManyRedirects, url: task.failingURLString,
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
        decision.core.onSettle { [weak task] answer in
            guard let task else { return }
            task.log?.decision("redirect", answer.logDescription)
            switch answer {
            case .follow(let request):
                task.machine { $0.history.followedRedirect() }
                task.startHop(request, credential: nil)
            case .stop:
                task.stopAtHeldResponse(held)
            }
        }
        task.offerDecision(.redirect(decision), decision.core) { handler, task in
            await handler.task(task, willPerformRedirection: decision)
        }
    }
}
