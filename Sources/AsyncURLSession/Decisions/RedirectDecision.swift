import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A 3xx response with a usable Location: follow it, follow something else,
/// or stop. The transfer waits for the answer.
///
/// Default (no answer by the next pull, or the decision dropped): follow the
/// proposed request, up to `SessionConfiguration.httpMaximumRedirects`;
/// except from https to http, which is only followed when answered explicitly
/// or allowed by `SessionConfiguration.followsInsecureRedirects`.
public final class RedirectDecision: Sendable {
    public enum Answer: Sendable {
        case follow(URLRequest)
        /// The redirect response and its body become the task's result.
        case stop
    }

    /// The 3xx response.
    public let response: HTTPURLResponse
    /// The next request as URLSession would send it: Location resolved against
    /// the current URL, method rewritten (301/302 POST and 303 become GET),
    /// credentials and cookies dropped when the origin changes.
    public let proposedRequest: URLRequest
    let core: DecisionCore<Answer>

    init(response: HTTPURLResponse, proposedRequest: URLRequest, defaultAnswer: Answer) {
        self.response = response
        self.proposedRequest = proposedRequest
        self.core = DecisionCore(default: defaultAnswer)
    }

    deinit { core.settleWithDefault() }

    /// Follow the proposed request.
    public func follow() { core.settle(.follow(proposedRequest)) }

    /// Follow another request instead (another URL, other headers). Headers
    /// are checked as for any request; cross-origin credentials are the
    /// caller's choice here.
    public func follow(_ request: URLRequest) { core.settle(.follow(request)) }

    /// Do not follow: the 3xx response and its body become the result.
    public func stop() { core.settle(.stop) }

    /// The answer, once settled.
    public var answer: Answer? { core.answer }
}
