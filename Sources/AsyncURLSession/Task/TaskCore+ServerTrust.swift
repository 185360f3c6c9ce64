internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Server-trust challenges (see `ServerTrustCheck` for the design): each new
/// TLS connection of a task that offers them stops in its handshake, the
/// chain becomes a `ChallengeDecision`, and the answer goes into the hop's
/// next attempt.
extension TaskCore {
    /// Attempts per task before the default verdict stands, so a server
    /// that changes its certificate at every connection cannot loop forever.
    static let maximumServerTrustChallenges = 5

    /// The trust settings for a hop to `request`'s URL; nil when the task
    /// does not offer server-trust challenges or the URL is not https.
    func serverTrustHop(for request: URLRequest) -> ServerTrustHop? {
        guard let url = request.url, url.absoluteString.hasPrefixIgnoringASCIICase("https:"),
            let host = url.host, !host.isEmpty
        else { return nil }
        let key = ServerTrustAnswers.key(host: host, port: url.port ?? 443)
        let (offers, answer) = guarded.withLock { ($0.offersServerTrust, $0.trustAnswers[key]) }
        guard offers else { return nil }
        switch answer {
        case .trusted(let leaf, let pin):
            return ServerTrustHop(
                check: ServerTrustCheck(host: host, mode: .acceptLeaf(leaf), overridesVerification: true), pin: pin)
        case .verified:
            return ServerTrustHop(
                check: ServerTrustCheck(host: host, mode: .acceptIfVerified, overridesVerification: false), pin: nil)
        case nil:
            // A chain the session trusted before: its connections first.
            if let pin = context.serverTrustAnswers.pin(for: key) {
                return ServerTrustHop(
                    check: ServerTrustCheck(host: host, mode: .ask, overridesVerification: true), pin: pin)
            }
            return ServerTrustHop(
                check: ServerTrustCheck(host: host, mode: .ask, overridesVerification: false), pin: nil)
        }
    }

    /// A hop's handshake stopped with `report`: ask, then start the hop again.
    func offerServerTrust(_ report: ServerTrustReport) {
        let (request, hopCredential, attempts) = guarded.withLock { guarded in
            guarded.trustChallenges += 1
            return (guarded.hop.request, guarded.hop.credential, guarded.trustChallenges)
        }
        let port = request.url?.port ?? 443
        let certificates = report.certificates.compactMap(TLSCertificate.init(derData:))
        let trust = ServerTrust(
            host: report.host, port: port, certificates: certificates, verificationResult: report.verifyError,
            url: request.url?.absoluteString)
        let key = ServerTrustAnswers.key(host: report.host, port: port)
        guard let leaf = certificates.first, attempts <= Self.maximumServerTrustChallenges else {
            useDefaultTrust(trust, key: key, request: request, credential: hopCredential)
            return
        }
        let decision = ChallengeDecision(
            protectionSpace: ServerTrustProtectionSpace(trust: trust), proposedCredential: nil,
            previousFailureCount: 0, failureResponse: nil, serverTrust: trust)
        decision.core.onSettle { [weak self] answer in
            guard let self else { return }
            switch answer {
            case .useCredential(let answer) where answer.trustedLeafSHA256 == leaf.sha256Fingerprint:
                let pin = leaf.publicKeyPin
                guarded.withLock { $0.trustAnswers[key] = .trusted(leafSHA256: leaf.sha256Fingerprint, pin: pin) }
                context.serverTrustAnswers.remember(pin, for: key)
                startHop(request, credential: hopCredential)
            case .useCredential, .performDefaultHandling:
                useDefaultTrust(trust, key: key, request: request, credential: hopCredential)
            case .cancel, .rejectProtectionSpace:
                completeWithTransactions(error: URLError.make(.cancelled, url: failingURLString, reason: "cancelled"))
            }
        }
        log?.decision("server trust for \(report.host)", "offered")
        offerDecision(.challenge(decision), decision.core) { handler, task in
            await handler.task(task, didReceive: decision)
        }
    }

    /// Default handling: the task fails with default verification's error,
    /// or the hop starts again where only verified connections serve it.
    private func useDefaultTrust(
        _ trust: ServerTrust, key: String, request: URLRequest, credential: HopCredential?
    ) {
        if let error = trust.verificationError {
            completeWithTransactions(error: error)
            return
        }
        guarded.withLock { $0.trustAnswers[key] = .verified }
        context.serverTrustAnswers.forget(key)
        startHop(request, credential: credential)
    }
}
