import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@testable import AsyncURLSession

/// `RetryRules` as a table: which hop ends are tried again, and after how
/// long. No task, no network.
@Suite struct RetryRulesTests {
    private static let url = URL(string: "https://origin.test/a")!

    private static func candidate(
        _ method: String = "GET", attempts: Int = 1, policy: RetryPolicy = RetryPolicy(jitter: 0)
    ) -> RetryCandidate {
        RetryCandidate(
            policy: policy, attemptsMade: attempts, elapsed: 0, resourceTimeout: 60, method: method,
            hasIdempotencyKey: false, bodyReplayable: true, responseBegun: false, connected: false, random: 0.5,
            now: Date(timeIntervalSince1970: 1_000_000))
    }

    private static func held(_ status: Int, _ fields: [String: String] = [:]) -> HopState.Held {
        HopState.Held(
            response: HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)!,
            kind: .retryableStatus)
    }

    private static let refused = HopEnd.failure(URLError(.cannotConnectToHost))

    @Test func refusedGET_isRetried_afterTheFirstBackoff() throws {
        let attempt = try #require(RetryRules.plan(after: Self.refused, held: nil, Self.candidate()))
        #expect(attempt.attempt == 2)
        #expect(abs(attempt.delay - 0.2) < 1e-9)
    }

    @Test func backoff_grows_andStopsAtItsMaximum() throws {
        let policy = RetryPolicy(maximumAttempts: 10, initialBackoff: 1, backoffMultiplier: 3, maximumBackoff: 5, jitter: 0)
        let third = try #require(RetryRules.plan(after: Self.refused, held: nil, Self.candidate(attempts: 2, policy: policy)))
        #expect(third.delay == 3)
        let fifth = try #require(RetryRules.plan(after: Self.refused, held: nil, Self.candidate(attempts: 4, policy: policy)))
        #expect(fifth.delay == 5)
    }

    @Test func jitter_takesUpToItsFractionOff() throws {
        var candidate = Self.candidate(policy: RetryPolicy(initialBackoff: 1, jitter: 0.5))
        candidate.random = 0.999
        let attempt = try #require(RetryRules.plan(after: Self.refused, held: nil, candidate))
        #expect(attempt.delay > 0.5 && attempt.delay < 0.51)
    }

    @Test func lastAttempt_isNotRetried() {
        #expect(RetryRules.plan(after: Self.refused, held: nil, Self.candidate(attempts: 3)) == nil)
    }

    @Test(arguments: ["POST", "PATCH", "CONNECT"])
    func nonIdempotentMethod_isNotRetried(_ method: String) {
        #expect(RetryRules.plan(after: Self.refused, held: nil, Self.candidate(method)) == nil)
    }

    @Test(arguments: ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"])
    func idempotentMethod_isRetried(_ method: String) {
        #expect(RetryRules.plan(after: Self.refused, held: nil, Self.candidate(method)) != nil)
    }

    @Test func post_withIdempotencyKey_orOptIn_isRetried() {
        var keyed = Self.candidate("POST")
        keyed.hasIdempotencyKey = true
        #expect(RetryRules.plan(after: Self.refused, held: nil, keyed) != nil)
        let optedIn = Self.candidate("POST", policy: RetryPolicy(retriesNonIdempotentRequests: true))
        #expect(RetryRules.plan(after: Self.refused, held: nil, optedIn) != nil)
    }

    @Test func bodyThatCannotBeSentAgain_isNotRetried() {
        var candidate = Self.candidate("PUT")
        candidate.bodyReplayable = false
        #expect(RetryRules.plan(after: Self.refused, held: nil, candidate) == nil)
    }

    @Test func responseAlreadyBegun_isNotRetried() {
        var candidate = Self.candidate()
        candidate.responseBegun = true
        #expect(RetryRules.plan(after: .failure(URLError(.networkConnectionLost)), held: nil, candidate) == nil)
    }

    @Test func timeOut_isRetriedOnlyWhileConnecting() {
        var candidate = Self.candidate()
        #expect(RetryRules.plan(after: .failure(URLError(.timedOut)), held: nil, candidate) != nil)
        candidate.connected = true
        #expect(RetryRules.plan(after: .failure(URLError(.timedOut)), held: nil, candidate) == nil)
    }

    @Test(arguments: [URLError.Code.badURL, .secureConnectionFailed, .serverCertificateUntrusted, .cancelled,
                      .userAuthenticationRequired, .cannotDecodeContentData])
    func failureAnotherAttemptCannotCure_isNotRetried(_ code: URLError.Code) {
        #expect(RetryRules.plan(after: .failure(URLError(code)), held: nil, Self.candidate()) == nil)
    }

    @Test func heldStatus_withRetryAfterSeconds_waitsAsAsked() throws {
        let attempt = try #require(
            RetryRules.plan(after: .success, held: Self.held(503, ["Retry-After": "2"]), Self.candidate()))
        #expect(attempt.delay == 2)
        guard case .status(let response) = attempt.reason else { Issue.record("not a status"); return }
        #expect(response.statusCode == 503)
    }

    @Test func retryAfterDate_isReadAsSecondsFromNow() throws {
        // 1_000_000 s after the epoch is Mon, 12 Jan 1970 13:46:40 GMT.
        let attempt = try #require(RetryRules.plan(
            after: .success, held: Self.held(429, ["Retry-After": "Mon, 12 Jan 1970 13:46:43 GMT"]), Self.candidate()))
        #expect(attempt.delay == 3)
    }

    @Test func retryAfter_isCapped() throws {
        let attempt = try #require(
            RetryRules.plan(after: .success, held: Self.held(503, ["Retry-After": "3600"]), Self.candidate()))
        #expect(attempt.delay == 30)
    }

    @Test func unreadableRetryAfter_usesTheBackoff() throws {
        let attempt = try #require(
            RetryRules.plan(after: .success, held: Self.held(503, ["Retry-After": "soon"]), Self.candidate()))
        #expect(abs(attempt.delay - 0.2) < 1e-9)
    }

    @Test func successWithNothingHeld_isNotRetried() {
        #expect(RetryRules.plan(after: .success, held: nil, Self.candidate()) == nil)
    }

    @Test func attemptStartingAfterTheTotalTime_isNotMade() {
        var candidate = Self.candidate(policy: RetryPolicy(maximumTotalTime: 1, jitter: 0))
        candidate.elapsed = 0.9
        #expect(RetryRules.plan(after: Self.refused, held: nil, candidate) == nil)
        candidate.elapsed = 0.5
        #expect(RetryRules.plan(after: Self.refused, held: nil, candidate) != nil)
    }

    @Test func attemptStartingAfterTheResourceTimeout_isNotMade() {
        var candidate = Self.candidate()
        candidate.resourceTimeout = 10
        candidate.elapsed = 9.9
        #expect(RetryRules.plan(after: Self.refused, held: nil, candidate) == nil)
    }

    @Test func retryPolicy_isAskedBeforeConnectivityWaits() {
        var outcome = HopOutcome(end: Self.refused, held: nil, waitsForConnectivity: true)
        outcome.retry = Self.candidate()
        #expect(HopPolicies.steps(after: outcome).map(\.name) == ["diagnoseTrust", "retry", "waitForConnectivity"])
    }

    @Test func heldRetryableStatus_isNotOfferedAsAChallengeOrRedirect() {
        var outcome = HopOutcome(end: .success, held: Self.held(503), waitsForConnectivity: false)
        #expect(HopPolicies.steps(after: outcome).isEmpty)
        outcome.retry = Self.candidate()
        #expect(HopPolicies.steps(after: outcome).map(\.name) == ["retry"])
    }
}

extension RetryAttempt: Equatable {
    public static func == (lhs: RetryAttempt, rhs: RetryAttempt) -> Bool {
        lhs.attempt == rhs.attempt && lhs.delay == rhs.delay
    }
}
