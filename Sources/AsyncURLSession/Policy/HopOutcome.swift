internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a hop came to, as the policies above the hop read it: how its
/// exchange ended, the response it held back for a decision, and the
/// settings that policies depend on. A value: the policies decide from it
/// alone, so each can be table-tested without a task or a network.
struct HopOutcome {
    /// How the hop's transfer ended.
    var end: HopEnd
    /// The 3xx/401/407 held back for a decision (`HopState.Held`), if any.
    var held: HopState.Held?
    /// `SessionConfiguration.waitsForConnectivity`.
    var waitsForConnectivity: Bool
    /// What the retry policy reads of the task; nil without a policy.
    var retry: RetryCandidate? = nil
}

/// What a policy says comes after a hop, carried out through the task's
/// `PolicyHost` calls (`HopStep.carryOut(on:)`); a step may find it has
/// nothing to do there (no certificate to diagnose, connectivity not worth
/// waiting for), and the next policy is asked.
enum HopStep {
    /// The handshake stopped for a server-trust or client-certificate
    /// decision: offer it, then the hop starts again.
    case offerTLSChallenge(TLSChallengeReport)
    /// A proxy refused CONNECT with 407, offering these methods: a proxy
    /// challenge, as a forwarded 407 would be.
    case offerProxyChallenge(methods: [String], error: URLError)
    /// A certificate failure: end a diagnosis hop, or start one that
    /// finds which certificate failed and why.
    case diagnoseTrust(URLError)
    /// The server could not be reached: try the hop again after a pause.
    case waitForConnectivity(URLError)
    /// The request again after a pause (`RetryPolicy`), unless the
    /// origin's retry budget is spent.
    case retry(RetryAttempt)
    /// A held 3xx: the redirect decision, then another hop or the end.
    case offerRedirect(HopState.Held, proposed: URLRequest, isDowngrade: Bool)
    /// A held 401/407: the challenge decision, then another hop or the end.
    case offerChallenge(HopState.Held)

    /// The step's name, for the policy table's tests.
    var name: String {
        switch self {
        case .offerTLSChallenge: "offerTLSChallenge"
        case .offerProxyChallenge: "offerProxyChallenge"
        case .diagnoseTrust: "diagnoseTrust"
        case .waitForConnectivity: "waitForConnectivity"
        case .retry: "retry"
        case .offerRedirect: "offerRedirect"
        case .offerChallenge: "offerChallenge"
        }
    }
}
