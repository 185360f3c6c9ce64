import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a core `ChallengeDecision` into the classic challenge object and the
/// classic answer back into the decision.
enum ChallengeBridge {
    static func challenge(for decision: ChallengeDecision) -> URLAuthenticationChallenge {
        URLAuthenticationChallenge(
            protectionSpace: decision.protectionSpace, proposedCredential: decision.proposedCredential,
            previousFailureCount: decision.previousFailureCount, failureResponse: decision.failureResponse,
            error: nil, sender: ChallengeSender.shared)
    }

    static func answer(
        _ decision: ChallengeDecision, with disposition: URLSession.AuthChallengeDisposition,
        credential: URLCredential?
    ) {
        switch disposition {
        case .useCredential:
            // Apple treats "use credential" with no credential as "continue
            // without one": the 401/407 becomes the result; for server
            // trust, the chain is judged as by default.
            if let credential {
                decision.useCredential(credential)
            } else if decision.serverTrust != nil {
                decision.performDefaultHandling()
            } else {
                decision.rejectProtectionSpace()
            }
        case .performDefaultHandling: decision.performDefaultHandling()
        case .cancelAuthenticationChallenge: decision.cancel()
        case .rejectProtectionSpace: decision.rejectProtectionSpace()
        }
    }
}

/// URLAuthenticationChallenge requires a sender; with completion handlers it
/// is never used (Apple's sessions ignore it too).
final class ChallengeSender: NSObject, URLAuthenticationChallengeSender, Sendable {
    static let shared = ChallengeSender()

    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}
