internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A handshake that stopped for a TLS challenge, as the question a handler
/// is asked, and what each answer means. A task and a WebSocket or stream
/// connection ask the same question and read the answer the same way; only
/// what they do about it differs (a task starts its hop again, a
/// connection connects again), so each acts on the `Meaning`.
struct TLSChallengeQuestion: Sendable {
    /// What an answer (or the lack of a question) means for the next attempt.
    enum Meaning: Sendable {
        /// Accept this leaf: connections under its public-key pin only.
        case trusted(leafSHA256: Data, pin: String)
        /// Default verification decides: fail with `trust.verificationError`
        /// if there is one, else connect again as verified.
        case defaultTrust(ServerTrust)
        /// Present this identity (remember it for the host when `persists`).
        case identity(ClientIdentity, persists: Bool)
        /// Go on without a client certificate; the server decides.
        case withoutCertificate
        case cancel
    }

    /// `TLSChallengeAnswers`' key for the host and port.
    let key: String
    /// The question, or nil when nobody is to be asked (`exhausted`, or a
    /// chain without a leaf): then `unasked` is the meaning.
    let decision: ChallengeDecision?
    let unasked: Meaning
    private let leafSHA256: Data?

    /// - Parameters:
    ///   - exhausted: too many challenges already (or nobody to ask): the
    ///     defaults stand without asking.
    init(_ report: TLSChallengeReport, url: String?, port: Int, exhausted: Bool) {
        switch report {
        case .serverTrust(let host, let ders, let verifyError):
            let trust = ServerTrust(
                host: host, port: port, certificates: ders.compactMap(TLSCertificate.init(derData:)),
                verificationResult: verifyError, url: url)
            key = TLSChallengeAnswers.key(host: host, port: port)
            unasked = .defaultTrust(trust)
            leafSHA256 = trust.leaf?.sha256Fingerprint
            decision = trust.leaf == nil || exhausted
                ? nil
                : ChallengeDecision(
                    protectionSpace: ServerTrustProtectionSpace(trust: trust), proposedCredential: nil,
                    previousFailureCount: 0, failureResponse: nil, serverTrust: trust)
        case .clientCertificate(let host):
            key = TLSChallengeAnswers.key(host: host, port: port)
            unasked = .withoutCertificate
            leafSHA256 = nil
            decision = exhausted
                ? nil
                : ChallengeDecision(
                    protectionSpace: URLProtectionSpace(
                        host: host, port: port, protocol: "https", realm: nil,
                        authenticationMethod: NSURLAuthenticationMethodClientCertificate),
                    proposedCredential: nil, previousFailureCount: 0, failureResponse: nil)
        }
    }

    /// What `answer` to `decision` means.
    func meaning(of answer: ChallengeDecision.Answer) -> Meaning {
        if case .defaultTrust(let trust) = unasked {
            switch answer {
            case .useCredential(let credential) where leafSHA256 != nil && credential.trustedLeafSHA256 == leafSHA256:
                // Only the leaf that was asked about: its pin, computed once.
                return .trusted(leafSHA256: leafSHA256!, pin: trust.leaf!.publicKeyPin)
            case .useCredential, .performDefaultHandling:
                return unasked
            case .cancel, .rejectProtectionSpace:
                return .cancel
            }
        }
        switch answer {
        case .useCredential(let credential):
            guard let identity = credential.clientIdentity else { return .withoutCertificate }
            return .identity(identity, persists: credential.persistence != .none)
        case .performDefaultHandling, .rejectProtectionSpace:
            // As Apple: no identity to offer, so none is sent.
            return .withoutCertificate
        case .cancel:
            return .cancel
        }
    }
}
