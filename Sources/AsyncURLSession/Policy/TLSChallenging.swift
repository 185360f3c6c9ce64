internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// TLS challenges (see `TLSChallengeCheck` for the design): each new TLS
/// connection of a task that offers them stops in its handshake when the
/// chain is to be judged or the server asks for a client certificate; that
/// becomes a `ChallengeDecision`, and the answer goes into the hop's next
/// attempt. And naming a certificate failure: a second handshake that
/// records the chain the first one refused.
enum TLSChallenging {
    /// Challenges per task before the defaults stand, so a server that
    /// changes its certificate at every connection cannot loop forever.
    static let maximumChallenges = 8

    /// The TLS-challenge settings for a hop to `request`'s URL; nil when the
    /// task does not offer them or the URL is not https.
    static func hopSettings(for request: URLRequest, on task: some PolicyHost) -> TLSChallengeHop? {
        guard task.offersTLSChallenges || task.machine({ $0.connectionState?.trustDiagnosis != nil }) else { return nil }
        guard let url = request.url, url.absoluteString.hasPrefixIgnoringASCIICase("https:"),
            let host = url.host, !host.isEmpty
        else { return nil }
        let key = TLSChallengeAnswers.key(host: host, port: url.port ?? 443)
        let (diagnosing, trustAnswer, identityAnswer) = task.machine { $0.tlsAnswers(for: key) }
        if diagnosing {
            // Record the chain and stop: nothing is sent, nobody is asked.
            let check = TLSChallengeCheck(host: host, trust: .ask, overridesVerification: false, asksForClientCertificate: false)
            return TLSChallengeHop(check: check, pin: nil, identity: nil)
        }
        return TLSChallengeHop.under(
            trustAnswer, identityAnswer, host: host, key: key, remembered: task.context.tlsChallengeAnswers)
    }

    /// A hop's handshake stopped for `report`: ask, then start the hop again.
    static func offer(_ report: TLSChallengeReport, on task: some PolicyHost) {
        if let original = task.machine({ $0.connectionState?.takeDiagnosis() }) {
            return finishDiagnosis(report, original: original, on: task)
        }
        let (request, credential, attempts) = task.machine { $0.tlsChallengeAsked() }
        let question = TLSChallengeQuestion(
            report, url: request.url?.absoluteString, port: request.url?.port ?? 443,
            exhausted: attempts > maximumChallenges)
        guard let decision = question.decision else {
            return act(on: question.unasked, key: question.key, request: request, credential: credential, on: task)
        }
        decision.core.onSettle { [weak task] answer in
            guard let task else { return }
            act(on: question.meaning(of: answer), key: question.key, request: request, credential: credential, on: task)
        }
        switch report {
        case .serverTrust(let host, _, _): task.log?.decision("server trust for \(host)", "offered")
        case .clientCertificate(let host): task.log?.decision("client certificate for \(host)", "offered")
        }
        task.offerDecision(.challenge(decision), decision.core) { handler, task in
            await handler.task(task, didReceive: decision)
        }
    }

    /// The answer's meaning for this task: the hop starts again under it
    /// (where only connections made under it serve it), or the task ends.
    private static func act(
        on meaning: TLSChallengeQuestion.Meaning, key: String, request: URLRequest, credential: HopCredential?,
        on task: some PolicyHost
    ) {
        let remembered = task.context.tlsChallengeAnswers
        switch meaning {
        case .trusted(let leafSHA256, let pin):
            task.machine { $0.connection().answered(trust: .trusted(leafSHA256: leafSHA256, pin: pin), for: key) }
            remembered.remember(pin: pin, for: key)
        case .defaultTrust(let trust):
            if let error = trust.verificationError { return task.completeWithTransactions(error: error) }
            task.machine { $0.connection().answered(trust: .verified, for: key) }
            remembered.forgetPin(for: key)
        case .identity(let identity, let persists):
            task.machine { $0.connection().answered(clientCertificate: .identity(identity), for: key) }
            if persists { remembered.remember(identity: identity, for: key) }
        case .withoutCertificate:
            task.machine { $0.connection().answered(clientCertificate: .withoutCertificate, for: key) }
        case .cancel:
            return task.completeWithTransactions(
                error: URLError.make(.cancelled, url: task.failingURLString, reason: "cancelled"))
        }
        task.startHop(request, credential: credential)
    }

    // MARK: - Naming a certificate failure

    /// libcurl reports a certificate failure with OpenSSL's code and words,
    /// not the chain (CERTINFO is empty when verification fails: LIBCURL-NOTES
    /// §11). To name the missing root or the names the certificate lists, a
    /// second handshake records the chain and stops before sending anything.
    /// Only on failure, so verified connections cost nothing more. True when
    /// that handshake started (the task ends when it does).
    static func diagnose(_ error: URLError, on task: some PolicyHost) -> Bool {
        let certificateCodes: Set<URLError.Code> = [
            .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid,
        ]
        guard certificateCodes.contains(error.code), !task.offersTLSChallenges,
            task.originalRequest.httpBodyStream == nil
        else { return false }
        if case .streamed = task.upload { return false }
        let (request, credential, started) = task.machine { $0.startTrustDiagnosis(of: error) }
        guard started, let url = request.url, url.absoluteString.hasPrefixIgnoringASCIICase("https:"),
            RequestPreparation.pinnedPublicKey(for: url, in: task.context.configuration.pinnedPublicKeys) == nil
        else {
            if started { _ = task.machine { $0.connectionState?.takeDiagnosis() } }
            return false
        }
        task.startHop(request, credential: credential)
        return true
    }

    /// The diagnosing handshake's report: the error names what it found.
    private static func finishDiagnosis(_ report: TLSChallengeReport, original: URLError, on task: some PolicyHost) {
        guard case .serverTrust(let host, let ders, let verifyError) = report, verifyError != 0 else {
            return task.completeWithTransactions(error: original)
        }
        let url = task.machine { $0.hop.request.url }
        let trust = ServerTrust(
            host: host, port: url?.port ?? 443, certificates: ders.compactMap(TLSCertificate.init(derData:)),
            verificationResult: verifyError, url: url?.absoluteString)
        task.completeWithTransactions(error: trust.verificationError.map { named in
            URLError(original.code, userInfo: original.userInfo.merging(named.userInfo) { _, new in new })
        } ?? original)
    }

    /// The diagnosing hop ended without a report: the first error stands.
    static func endDiagnosis(on task: some PolicyHost) -> URLError? {
        task.machine { $0.connectionState?.takeDiagnosis() }
    }
}
