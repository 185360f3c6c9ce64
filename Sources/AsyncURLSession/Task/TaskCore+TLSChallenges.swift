internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// TLS challenges (see `TLSChallengeCheck` for the design): each new TLS
/// connection of a task that offers them stops in its handshake when the
/// chain is to be judged or the server asks for a client certificate; that
/// becomes a `ChallengeDecision`, and the answer goes into the hop's next
/// attempt.
extension TaskCore {
    /// Challenges per task before the defaults stand, so a server that
    /// changes its certificate at every connection cannot loop forever.
    static let maximumTLSChallenges = 8

    /// The TLS-challenge settings for a hop to `request`'s URL; nil when the
    /// task does not offer them or the URL is not https.
    func tlsChallengeHop(for request: URLRequest) -> TLSChallengeHop? {
        guard offersTLS.load(ordering: .relaxed) || guarded.withLock({ $0.connectionState?.trustDiagnosis != nil }) else { return nil }
        guard let url = request.url, url.absoluteString.hasPrefixIgnoringASCIICase("https:"),
            let host = url.host, !host.isEmpty
        else { return nil }
        let key = TLSChallengeAnswers.key(host: host, port: url.port ?? 443)
        let (diagnosing, trustAnswer, identityAnswer) = guarded.withLock { $0.tlsAnswers(for: key) }
        if diagnosing {
            // Record the chain and stop: nothing is sent, nobody is asked.
            let check = TLSChallengeCheck(host: host, trust: .ask, overridesVerification: false, asksForClientCertificate: false)
            return TLSChallengeHop(check: check, pin: nil, identity: nil)
        }
        return TLSChallengeHop.under(
            trustAnswer, identityAnswer, host: host, key: key, remembered: context.tlsChallengeAnswers)
    }

    /// A hop's handshake stopped for `report`: ask, then start the hop again.
    func offerTLSChallenge(_ report: TLSChallengeReport) {
        if let original = guarded.withLock({ $0.connectionState?.takeDiagnosis() }) {
            return finishTrustDiagnosis(report, original: original)
        }
        let (request, credential, attempts) = guarded.withLock { $0.tlsChallengeAsked() }
        let question = TLSChallengeQuestion(
            report, url: request.url?.absoluteString, port: request.url?.port ?? 443,
            exhausted: attempts > Self.maximumTLSChallenges)
        guard let decision = question.decision else {
            return act(on: question.unasked, key: question.key, request: request, credential: credential)
        }
        decision.core.onSettle { [weak self] answer in
            self?.act(on: question.meaning(of: answer), key: question.key, request: request, credential: credential)
        }
        switch report {
        case .serverTrust(let host, _, _): log?.decision("server trust for \(host)", "offered")
        case .clientCertificate(let host): log?.decision("client certificate for \(host)", "offered")
        }
        offerDecision(.challenge(decision), decision.core) { handler, task in
            await handler.task(task, didReceive: decision)
        }
    }

    /// The answer's meaning for this task: the hop starts again under it
    /// (where only connections made under it serve it), or the task ends.
    private func act(
        on meaning: TLSChallengeQuestion.Meaning, key: String, request: URLRequest, credential: HopCredential?
    ) {
        switch meaning {
        case .trusted(let leafSHA256, let pin):
            guarded.withLock { $0.connection().answered(trust: .trusted(leafSHA256: leafSHA256, pin: pin), for: key) }
            context.tlsChallengeAnswers.remember(pin: pin, for: key)
        case .defaultTrust(let trust):
            if let error = trust.verificationError { return completeWithTransactions(error: error) }
            guarded.withLock { $0.connection().answered(trust: .verified, for: key) }
            context.tlsChallengeAnswers.forgetPin(for: key)
        case .identity(let identity, let persists):
            guarded.withLock { $0.connection().answered(clientCertificate: .identity(identity), for: key) }
            if persists { context.tlsChallengeAnswers.remember(identity: identity, for: key) }
        case .withoutCertificate:
            guarded.withLock { $0.connection().answered(clientCertificate: .withoutCertificate, for: key) }
        case .cancel:
            return completeWithTransactions(error: URLError.make(.cancelled, url: failingURLString, reason: "cancelled"))
        }
        startHop(request, credential: credential)
    }

    // MARK: - Naming a certificate failure

    /// libcurl reports a certificate failure with OpenSSL's code and words,
    /// not the chain (CERTINFO is empty when verification fails: LIBCURL-NOTES
    /// §11). To name the missing root or the names the certificate lists, a
    /// second handshake records the chain and stops before sending anything.
    /// Only on failure, so verified connections cost nothing more. True when
    /// that handshake started (the task ends when it does).
    func diagnoseCertificateFailure(_ error: URLError) -> Bool {
        let certificateCodes: Set<URLError.Code> = [
            .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid,
        ]
        guard certificateCodes.contains(error.code), !offersTLS.load(ordering: .relaxed),
            originalRequest.httpBodyStream == nil
        else { return false }
        if case .streamed = upload { return false }
        let (request, credential, started) = guarded.withLock { $0.startTrustDiagnosis(of: error) }
        guard started, let url = request.url, url.absoluteString.hasPrefixIgnoringASCIICase("https:"),
            RequestPreparation.pinnedPublicKey(for: url, in: context.configuration.pinnedPublicKeys) == nil
        else {
            if started { _ = guarded.withLock { $0.connectionState?.takeDiagnosis() } }
            return false
        }
        startHop(request, credential: credential)
        return true
    }

    /// The diagnosing handshake's report: the error names what it found.
    private func finishTrustDiagnosis(_ report: TLSChallengeReport, original: URLError) {
        guard case .serverTrust(let host, let ders, let verifyError) = report, verifyError != 0 else {
            return completeWithTransactions(error: original)
        }
        let url = guarded.withLock { $0.hop.request.url }
        let trust = ServerTrust(
            host: host, port: url?.port ?? 443, certificates: ders.compactMap(TLSCertificate.init(derData:)),
            verificationResult: verifyError, url: url?.absoluteString)
        completeWithTransactions(error: trust.verificationError.map { named in
            URLError(original.code, userInfo: original.userInfo.merging(named.userInfo) { _, new in new })
        } ?? original)
    }

    /// The diagnosing hop ended without a report: the first error stands.
    func endTrustDiagnosis() -> URLError? {
        guarded.withLock { $0.connectionState?.takeDiagnosis() }
    }
}
