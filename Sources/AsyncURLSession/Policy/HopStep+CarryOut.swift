import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Carrying out what the policies decided, through the task's `PolicyHost`
/// calls alone.
extension HopPolicies {
    /// A hop ended: the first step the policies propose that applies is
    /// carried out; with none, the hop's end is the task's.
    static func finish(_ outcome: HopOutcome, on task: some PolicyHost) {
        for policy in inOrder {
            guard let step = policy(outcome) else { continue }
            if step.carryOut(on: task) { return }
        }
        switch outcome.end {
        case .failure(let error):
            task.completeWithTransactions(error: error)
        case .success:
            // A response held for a decision no policy offered is the
            // result, as one nobody answered would be: never dropped.
            if let held = outcome.held {
                task.stopAtHeldResponse(held)
            } else if !CacheAtHopEnd.finish(on: task) {
                task.completeWithTransactions(error: nil)
            }
        case .tlsChallenge, .proxyRefusedConnect:
            // Their policies always take them (a step that cannot carry
            // them out ends the task itself).
            preconditionFailure("a hop end no policy took: \(outcome.end)")
        }
    }
}

extension HopStep {
    /// Carries the step out and returns true, or returns false when it has
    /// nothing to do here and the next policy is to be asked.
    func carryOut(on task: some PolicyHost) -> Bool {
        switch self {
        case .offerTLSChallenge(let report):
            TLSChallenging.offer(report, on: task)
            return true
        case .offerProxyChallenge(let methods, let error):
            if let held = task.machine({ $0.holdConnectRefusal(methods: methods, error: error) }) {
                AuthenticationChallenging.offer(held, on: task)
            } else {
                task.completeWithTransactions(error: error)
            }
            return true
        case .diagnoseTrust(let error):
            // The end of a hop made to diagnose a certificate failure: the
            // task ends with the original failure, explained.
            if let original = TLSChallenging.endDiagnosis(on: task) {
                task.completeWithTransactions(error: original)
                return true
            }
            return TLSChallenging.diagnose(error, on: task)
        case .waitForConnectivity(let error):
            return ConnectivityWaiting.wait(after: error, on: task)
        case .retry(let attempt):
            return RetryScheduling.retry(attempt, on: task)
        case .offerRedirect(let held, let proposed, let isDowngrade):
            RedirectFollowing.offer(held, proposed: proposed, isDowngrade: isDowngrade, on: task)
            return true
        case .offerChallenge(let held):
            AuthenticationChallenging.offer(held, on: task)
            return true
        }
    }
}
