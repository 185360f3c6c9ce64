import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server (401) or proxy (407) asks for credentials, a new TLS
/// connection's certificate chain waits to be trusted (server trust), or a
/// server asks for a client certificate (the last two when the task offers
/// them: `SessionConfiguration.offersTLSChallenges`), as URLSession's
/// authentication challenge. The transfer waits for the answer.
///
/// Default (no answer by the next pull, or the decision dropped):
/// `.performDefaultHandling` — a credential stored in the session for this
/// protection space, else the user and password of the URL, else the 401/407
/// response becomes the task's result. For server trust: default
/// verification decides (`ServerTrust.isTrustedByDefault`); for a client
/// certificate: none is sent.
public final class ChallengeDecision: Sendable {
    public enum Answer: Sendable {
        /// libcurl performs Basic, Digest, NTLM or Negotiate with it and the
        /// request is sent again. For server trust, `URLCredential(trust:)`
        /// trusts the offered chain; for a client certificate,
        /// `URLCredential(identity:)` presents that identity; any other
        /// credential means default handling.
        case useCredential(URLCredential)
        case performDefaultHandling
        /// The task completes with `URLError(.cancelled)`.
        case cancel
        /// Try the next method the server offered, else the response is the
        /// result. For server trust, as `cancel`; for a client certificate,
        /// none is sent.
        case rejectProtectionSpace
    }

    public let protectionSpace: URLProtectionSpace
    /// Before a failure, the credential default handling would use, if any;
    /// after one, the credential that failed (as Apple).
    public let proposedCredential: URLCredential?
    /// Failed attempts in this protection space during this task.
    public let previousFailureCount: Int
    /// The 401 or 407 response; nil for server trust.
    public let failureResponse: HTTPURLResponse?
    /// For a server-trust challenge, the chain and its default verdict.
    public let serverTrust: ServerTrust?
    /// Connection-level methods (NTLM, Negotiate; server trust and client
    /// certificates) go to a session-level handler first in the classic API;
    /// request-level ones (Basic, Digest) only to the task-level handler.
    public let isConnectionLevel: Bool
    let core = DecisionCore<Answer>(default: .performDefaultHandling)

    init(
        protectionSpace: URLProtectionSpace, proposedCredential: URLCredential?, previousFailureCount: Int,
        failureResponse: HTTPURLResponse?, serverTrust: ServerTrust? = nil
    ) {
        self.serverTrust = serverTrust
        self.protectionSpace = protectionSpace
        self.proposedCredential = proposedCredential
        self.previousFailureCount = previousFailureCount
        self.failureResponse = failureResponse
        let method = protectionSpace.authenticationMethod
        // Apple's names for server trust and client certificates: ours
        // (ServerTrust+Foundation.swift), corelibs marks its own unavailable.
        self.isConnectionLevel = method == NSURLAuthenticationMethodNTLM
            || method == NSURLAuthenticationMethodNegotiate
            || method == NSURLAuthenticationMethodServerTrust
            || method == NSURLAuthenticationMethodClientCertificate
    }

    deinit { core.settleWithDefault() }

    public func useCredential(_ credential: URLCredential) { core.settle(.useCredential(credential)) }
    public func performDefaultHandling() { core.settle(.performDefaultHandling) }
    public func cancel() { core.settle(.cancel) }
    public func rejectProtectionSpace() { core.settle(.rejectProtectionSpace) }

    public var answer: Answer? { core.answer }
}
