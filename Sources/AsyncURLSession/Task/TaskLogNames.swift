internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Names of the task's events, decisions and answers as the task log and
// the challenge headers write them.

extension TaskCore {
    /// A method's name in a Proxy-Authenticate field.
    static func challengeName(_ scheme: TransferRequest.Authentication.Scheme) -> String {
        switch scheme {
        case .basic: "Basic"
        case .digest: "Digest"
        case .ntlm: "NTLM"
        case .negotiate: "Negotiate"
        }
    }

    /// The name of a decision's event, for the log.
    static func decisionName(_ event: TaskEvent) -> String {
        switch event {
        case .redirect: "redirect"
        case .challenge: "challenge"
        case .needBodyStream: "body stream"
        case .response: "response"
        case .willCacheResponse: "cache"
        case .waitingForConnectivity: "waiting for connectivity"
        case .retrying: "retry"
        default: "other"
        }
    }
}

extension RedirectDecision.Answer {
    /// For the task log (the URL without its password).
    var logDescription: String {
        switch self {
        case .follow(let request): "follow \(TaskLog.redacted(request.url))"
        case .stop: "stop"
        }
    }
}

extension RetryReason {
    /// For the task log.
    var logDescription: String {
        switch self {
        case .failure(let error): "error \(error.code.rawValue) (\(error.localizedDescription))"
        case .status(let response): "status \(response.statusCode)"
        }
    }
}
