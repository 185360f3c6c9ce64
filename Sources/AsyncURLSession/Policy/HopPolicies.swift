internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The policies above the hop, in one place. When a hop ends, each looks at
/// its outcome in turn and either passes (nil) or says what comes next;
/// `finish(_:on:)` carries out the first step that applies
/// (`HopStep+CarryOut.swift`), and when a step finds nothing to do, asks
/// the next policy. When every policy passes, the hop's end is the task's:
/// its error, or its response.
///
/// To add a policy (a retry, a middleware's "another attempt"): write one
/// function `(HopOutcome) -> HopStep?`, put it in `inOrder` where it must
/// be asked, and add its rows to `HopPoliciesTests`. Only a new kind of
/// step needs a case in `HopStep` and its lines in `HopStep.carryOut(on:)`,
/// written against `PolicyHost` (the README's "Adding a policy").
enum HopPolicies {
    /// A policy: the step it wants after this outcome, or nil to pass.
    typealias Policy = @Sendable (HopOutcome) -> HopStep?

    /// In the order they are asked. Trust comes before anything is retried
    /// (a retry would fail the same way); the retry policy's attempts come
    /// before waiting for connectivity, which outlasts them; redirects and
    /// challenges only see hops that held a response.
    static let inOrder: [Policy] = [
        tlsChallenge, proxyConnectRefusal, trustDiagnosis, retry, connectivityWait, redirect, authentication,
    ]

    /// Every step the policies propose for `outcome`, in order: what the
    /// task tries, first to last.
    static func steps(after outcome: HopOutcome) -> [HopStep] {
        inOrder.compactMap { $0(outcome) }
    }

    // MARK: The policies

    /// A handshake stopped for a TLS-challenge decision (nothing was sent).
    static func tlsChallenge(_ outcome: HopOutcome) -> HopStep? {
        guard case .tlsChallenge(let report) = outcome.end else { return nil }
        return .offerTLSChallenge(report)
    }

    /// A proxy's 407 to CONNECT, which libcurl reports as a failure.
    static func proxyConnectRefusal(_ outcome: HopOutcome) -> HopStep? {
        guard case .proxyRefusedConnect(let methods, let error) = outcome.end else { return nil }
        return .offerProxyChallenge(methods: methods, error: error)
    }

    /// Any failure: the task diagnoses certificate failures (and ends the
    /// hops it started to diagnose one).
    static func trustDiagnosis(_ outcome: HopOutcome) -> HopStep? {
        guard case .failure(let error) = outcome.end else { return nil }
        return .diagnoseTrust(error)
    }

    /// `waitsForConnectivity`: a failure may be worth waiting out
    /// (`ConnectivityRetry` says which, and for how long).
    static func connectivityWait(_ outcome: HopOutcome) -> HopStep? {
        guard outcome.waitsForConnectivity, case .failure(let error) = outcome.end else { return nil }
        return .waitForConnectivity(error)
    }

    /// `RetryPolicy`: a failure before any response, or a held retryable
    /// status, of a request safe to send again (`RetryRules`).
    static func retry(_ outcome: HopOutcome) -> HopStep? {
        guard let candidate = outcome.retry,
            let attempt = RetryRules.plan(after: outcome.end, held: outcome.held, candidate)
        else { return nil }
        return .retry(attempt)
    }

    /// A held 3xx with a usable Location.
    static func redirect(_ outcome: HopOutcome) -> HopStep? {
        guard case .success = outcome.end, let held = outcome.held,
            case .redirect(let proposed, let isDowngrade) = held.kind
        else { return nil }
        return .offerRedirect(held, proposed: proposed, isDowngrade: isDowngrade)
    }

    /// A held 401/407 (final, or provisional while libcurl ran its own
    /// exchange and ended on it).
    static func authentication(_ outcome: HopOutcome) -> HopStep? {
        guard case .success = outcome.end, let held = outcome.held else { return nil }
        switch held.kind {
        case .challenge, .provisionalAuthFailure: return .offerChallenge(held)
        case .redirect, .retryableStatus: return nil
        }
    }
}
