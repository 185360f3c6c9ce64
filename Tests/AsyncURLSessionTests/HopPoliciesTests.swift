import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@testable import AsyncURLSession

/// The policies above the hop as a table: for each kind of hop outcome, the
/// steps they propose, in the order the task tries them. No task, no network.
@Suite struct HopPoliciesTests {
    private static let url = URL(string: "https://origin.test/a")!

    private static func held(_ status: Int, _ kind: HopState.HeldKind) -> HopState.Held {
        HopState.Held(
            response: HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: [:])!,
            kind: kind)
    }

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let end: HopEnd
        let heldKind: String?
        let waitsForConnectivity: Bool
        let steps: [String]
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "a success with nothing held ends the task", end: .success, heldKind: nil,
            waitsForConnectivity: false, steps: []),
        Row(name: "a success holding a redirect offers it", end: .success, heldKind: "redirect",
            waitsForConnectivity: false, steps: ["offerRedirect"]),
        Row(name: "a success holding a 401 offers a challenge", end: .success, heldKind: "challenge",
            waitsForConnectivity: false, steps: ["offerChallenge"]),
        Row(name: "a provisional 401 that ended the hop offers a challenge", end: .success,
            heldKind: "provisional", waitsForConnectivity: false, steps: ["offerChallenge"]),
        Row(name: "a failure is diagnosed, then final", end: .failure(URLError(.cannotConnectToHost)), heldKind: nil,
            waitsForConnectivity: false, steps: ["diagnoseTrust"]),
        Row(name: "a failure waits for connectivity after its diagnosis",
            end: .failure(URLError(.cannotConnectToHost)), heldKind: nil, waitsForConnectivity: true,
            steps: ["diagnoseTrust", "waitForConnectivity"]),
        Row(name: "a failure's held response is not offered", end: .failure(URLError(.networkConnectionLost)),
            heldKind: "redirect", waitsForConnectivity: false, steps: ["diagnoseTrust"]),
        Row(name: "a handshake stopped for trust offers the TLS challenge",
            end: .tlsChallenge(.clientCertificate(host: "origin.test")), heldKind: nil, waitsForConnectivity: true,
            steps: ["offerTLSChallenge"]),
        Row(name: "a proxy refusing CONNECT offers a proxy challenge",
            end: .proxyRefusedConnect(["Basic"], URLError(.cannotConnectToHost)), heldKind: nil,
            waitsForConnectivity: true, steps: ["offerProxyChallenge"]),
    ]

    @Test(arguments: rows)
    func stepsAfter(_ row: Row) {
        let held: HopState.Held? = switch row.heldKind {
        case "redirect"?: Self.held(302, .redirect(proposed: URLRequest(url: Self.url), isDowngrade: false))
        case "challenge"?: Self.held(401, .challenge)
        case "provisional"?: Self.held(401, .provisionalAuthFailure)
        default: nil
        }
        let outcome = HopOutcome(end: row.end, held: held, waitsForConnectivity: row.waitsForConnectivity)
        #expect(HopPolicies.steps(after: outcome).map(\.name) == row.steps)
    }

    @Test func theRedirectStep_carriesTheProposedRequest() {
        var proposed = URLRequest(url: URL(string: "https://origin.test/b")!)
        proposed.httpMethod = "GET"
        let outcome = HopOutcome(
            end: .success, held: Self.held(303, .redirect(proposed: proposed, isDowngrade: true)),
            waitsForConnectivity: false)
        guard case .offerRedirect(_, let request, let isDowngrade)? = HopPolicies.steps(after: outcome).first else {
            Issue.record("no redirect step")
            return
        }
        #expect(request.url?.path == "/b")
        #expect(isDowngrade)
    }
}

/// The README's "Adding a policy" example, as written there: one function
/// and its table, with no task and no network.
extension HopPolicies {
    static func retryA503Once(_ outcome: HopOutcome) -> HopStep? {
        guard case .success = outcome.end, let held = outcome.held, held.response.statusCode == 503,
            let task = outcome.retry, task.attemptsMade < 2
        else { return nil }
        return .retry(RetryAttempt(attempt: task.attemptsMade + 1, delay: 0, reason: .status(held.response)))
    }
}

@Suite struct AddedPolicyTests {
    private static let url = URL(string: "https://origin.test/a")!

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let status: Int?
        let attemptsMade: Int
        let step: String?
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "a held 503 after the first attempt is retried", status: 503, attemptsMade: 1, step: "retry"),
        Row(name: "a held 503 after the second attempt is not", status: 503, attemptsMade: 2, step: nil),
        Row(name: "a held 429 is not this policy's", status: 429, attemptsMade: 1, step: nil),
        Row(name: "nothing held is not this policy's", status: nil, attemptsMade: 1, step: nil),
    ]

    @Test(arguments: rows)
    func aPolicyAsTheREADMEWritesIt(_ row: Row) {
        let held = row.status.map {
            HopState.Held(
                response: HTTPURLResponse(url: Self.url, statusCode: $0, httpVersion: "HTTP/1.1", headerFields: [:])!,
                kind: .retryableStatus)
        }
        let candidate = RetryCandidate(
            policy: .standard, attemptsMade: row.attemptsMade, elapsed: 0, resourceTimeout: 60, method: "GET",
            hasIdempotencyKey: false, bodyReplayable: true, responseBegun: false, connected: true, random: 0.5,
            now: Date())
        let outcome = HopOutcome(end: .success, held: held, waitsForConnectivity: false, retry: candidate)
        let step = HopPolicies.retryA503Once(outcome)
        #expect(step?.name == row.step)
        if case .retry(let attempt)? = step {
            #expect(attempt.attempt == 2)
            #expect(attempt.delay == 0)
        }
    }
}
