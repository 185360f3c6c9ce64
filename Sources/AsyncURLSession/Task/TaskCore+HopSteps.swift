import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Carrying out what the policies above the hop decided (`HopPolicies`).
extension TaskCore {
    /// A hop ended: the first step the policies propose that applies is
    /// carried out; with none, the hop's end is the task's.
    /// - Parameter connected: the hop's transfer had connected (a time-out
    ///   before is worth a retry, one after is not).
    func finishHop(_ end: HopEnd, held: HopState.Held?, connected: Bool = true) {
        let outcome = HopOutcome(
            end: end, held: held, waitsForConnectivity: context.configuration.waitsForConnectivity,
            retry: retryCandidate(connected: connected))
        for policy in HopPolicies.inOrder {
            guard let step = policy(outcome) else { continue }
            if carryOut(step) { return }
        }
        switch end {
        case .failure(let error):
            completeWithTransactions(error: error)
        case .success:
            // A response held for a decision no policy offered is the
            // result, as one nobody answered would be: never dropped.
            if let held {
                stopAtHeldResponse(held)
            } else if !finishWithCache() {
                completeWithTransactions(error: nil)
            }
        case .tlsChallenge, .proxyRefusedConnect:
            // Their policies always take them (a step that cannot carry
            // them out ends the task itself).
            preconditionFailure("a hop end no policy took: \(end)")
        }
    }

    /// Carries `step` out and returns true, or returns false when it has
    /// nothing to do here and the next policy is to be asked.
    private func carryOut(_ step: HopStep) -> Bool {
        switch step {
        case .offerTLSChallenge(let report):
            offerTLSChallenge(report)
            return true
        case .offerProxyChallenge(let methods, let error):
            let held = guarded.withLock { $0.holdConnectRefusal(methods: methods, error: error) }
            if let held { offerChallenge(held) } else { completeWithTransactions(error: error) }
            return true
        case .diagnoseTrust(let error):
            // The end of a hop made to diagnose a certificate failure: the
            // task ends with the original failure, explained.
            if let original = endTrustDiagnosis() {
                completeWithTransactions(error: original)
                return true
            }
            return diagnoseCertificateFailure(error)
        case .waitForConnectivity(let error):
            return waitForConnectivity(after: error)
        case .retry(let attempt):
            return retry(attempt)
        case .offerRedirect(let held, let proposed, let isDowngrade):
            offerRedirect(held, proposed: proposed, isDowngrade: isDowngrade)
            return true
        case .offerChallenge(let held):
            offerChallenge(held)
            return true
        }
    }
}
