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
        let question = TLSChallengeQuestion(
            report, url: url.absoluteString, port: url.port ?? 443,
            exhausted: count > TLSChallenging.maximumChallenges || handler == nil)
        let key = question.key
        let act: @Sendable (TLSChallengeQuestion.Meaning) -> Void = { [self] meaning in
            switch meaning {
            case .trusted(let leafSHA256, let pin):
                state.withLock { $0.trust = .trusted(leafSHA256: leafSHA256, pin: pin) }
                remembered.remember(pin: pin, for: key)
                retry()
            case .defaultTrust(let trust):
                if let error = trust.verificationError { return fail(error) }
                state.withLock { $0.trust = .verified }
                remembered.forgetPin(for: key)
                retry()
            case .identity(let identity, let persists):
                state.withLock { $0.identity = .identity(identity) }
                if persists { remembered.remember(identity: identity, for: key) }
                retry()
            case .withoutCertificate:
                state.withLock { $0.identity = .withoutCertificate }
                retry()
            case .cancel:
                fail(URLError.make(.cancelled, url: url.absoluteString, reason: "cancelled"))
            }
        }
        guard let decision = question.decision, let handler else { return act(question.unasked) }
        decision.core.onSettle { answer in act(question.meaning(of: answer)) }
        Task {
            await handler(decision)
            // A handler that returned without answering chose the default.
            decision.core.settleWithDefault()
        }
    }
}
