internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// TLS challenges of a WebSocket or stream connection, as a task's (see
/// `TLSChallengeCheck` for the design): with a handler set, a new TLS
/// connection stops in its handshake when its chain is to be judged or the
/// server asks for a client certificate; the handler's answer goes into the
/// next attempt to connect. Without a handler nothing changes: default
/// verification, no extra handshake.
final class ConnectionTLSChallenges: Sendable {
    typealias Handler = @Sendable (ChallengeDecision) async -> Void

    private struct State {
        var handler: Handler?
        var trust: TaskTrustAnswer?
        var identity: TaskClientCertificateAnswer?
        var count = 0
    }

    private let state = Mutex(State())

    var handler: Handler? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    /// The settings for connecting to `url`; nil without a handler or TLS.
    func hop(for url: URL, remembered: TLSChallengeAnswers) -> TLSChallengeHop? {
        guard url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else { return nil }
        let answers = state.withLock { state in state.handler == nil ? nil : (state.trust, state.identity) }
        guard let (trust, identity) = answers else { return nil }
        let key = TLSChallengeAnswers.key(host: host, port: url.port ?? 443)
        return TLSChallengeHop.under(trust, identity, host: host, key: key, remembered: remembered)
    }

    /// Asks the handler about the stopped handshake `report`; `retry`
    /// connects again under the answer, `fail` ends the connection.
    func offer(
        _ report: TLSChallengeReport, url: URL, remembered: TLSChallengeAnswers,
        retry: @escaping @Sendable () -> Void, fail: @escaping @Sendable (URLError) -> Void
    ) {
        let (handler, count) = state.withLock { state in
            state.count += 1
            return (state.handler, state.count)
        }
        let exhausted = count > TaskCore.maximumTLSChallenges || handler == nil
        let port = url.port ?? 443
        let decision: ChallengeDecision
        switch report {
        case .serverTrust(let host, let ders, let verifyError):
            let trust = ServerTrust(
                host: host, port: port, certificates: ders.compactMap(TLSCertificate.init(derData:)),
                verificationResult: verifyError, url: url.absoluteString)
            let key = TLSChallengeAnswers.key(host: host, port: port)
            let useDefault: @Sendable () -> Void = { [self] in
                if let error = trust.verificationError { return fail(error) }
                state.withLock { $0.trust = .verified }
                remembered.forgetPin(for: key)
                retry()
            }
            guard let leaf = trust.leaf, !exhausted else { return useDefault() }
            decision = ChallengeDecision(
                protectionSpace: ServerTrustProtectionSpace(trust: trust), proposedCredential: nil,
                previousFailureCount: 0, failureResponse: nil, serverTrust: trust)
            decision.core.onSettle { [self] answer in
                switch answer {
                case .useCredential(let credential) where credential.trustedLeafSHA256 == leaf.sha256Fingerprint:
                    let pin = leaf.publicKeyPin
                    state.withLock { $0.trust = .trusted(leafSHA256: leaf.sha256Fingerprint, pin: pin) }
                    remembered.remember(pin: pin, for: key)
                    retry()
                case .useCredential, .performDefaultHandling:
                    useDefault()
                case .cancel, .rejectProtectionSpace:
                    fail(URLError.make(.cancelled, url: url.absoluteString, reason: "cancelled"))
                }
            }
        case .clientCertificate(let host):
            let key = TLSChallengeAnswers.key(host: host, port: port)
            let goOnWithout: @Sendable () -> Void = { [self] in
                state.withLock { $0.identity = .withoutCertificate }
                retry()
            }
            guard !exhausted else { return goOnWithout() }
            decision = ChallengeDecision(
                protectionSpace: URLProtectionSpace(
                    host: host, port: port, protocol: "https", realm: nil,
                    authenticationMethod: NSURLAuthenticationMethodClientCertificate),
                proposedCredential: nil, previousFailureCount: 0, failureResponse: nil)
            decision.core.onSettle { [self] answer in
                switch answer {
                case .useCredential(let credential):
                    guard let identity = credential.clientIdentity else { return goOnWithout() }
                    state.withLock { $0.identity = .identity(identity) }
                    if credential.persistence != .none { remembered.remember(identity: identity, for: key) }
                    retry()
                case .performDefaultHandling, .rejectProtectionSpace:
                    goOnWithout()
                case .cancel:
                    fail(URLError.make(.cancelled, url: url.absoluteString, reason: "cancelled"))
                }
            }
        }
        guard let handler else { return decision.core.settleWithDefault() }
        Task {
            await handler(decision)
            // A handler that returned without answering chose the default.
            decision.core.settleWithDefault()
        }
    }
}
