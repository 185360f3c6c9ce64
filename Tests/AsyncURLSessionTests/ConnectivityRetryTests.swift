import Foundation
import Testing

@testable import AsyncURLSession

/// `waitsForConnectivity`'s retry plan on its own: no engine, no network.
@Suite struct ConnectivityRetryTests {
    @Test(arguments: [URLError.Code.badServerResponse, .networkConnectionLost, .cancelled, .timedOut])
    func aFailureWaitingCannotCure_fails(code: URLError.Code) {
        var retry = ConnectivityRetry()
        #expect(retry.hopFailed(code, elapsed: 1, resourceTimeout: 60, responseBegun: false) == .fail)
        #expect(retry.retries == 0)
    }

    @Test func pausesDoubleFromAQuarterSecondUpToFive_announcingOnlyTheFirst() {
        var retry = ConnectivityRetry()
        var pauses: [ConnectivityRetry.Action] = []
        for _ in 0..<7 {
            pauses.append(retry.hopFailed(.cannotConnectToHost, elapsed: 0, resourceTimeout: .infinity, responseBegun: false))
        }
        #expect(pauses == [
            .retry(after: 0.25, announce: true), .retry(after: 0.5, announce: false), .retry(after: 1, announce: false),
            .retry(after: 2, announce: false), .retry(after: 4, announce: false), .retry(after: 5, announce: false),
            .retry(after: 5, announce: false),
        ])
        #expect(retry.retries == 7)
    }

    @Test func theLastPauseEndsAtTheResourceTimeout() {
        var retry = ConnectivityRetry()
        guard case .retry(let pause, true) = retry.hopFailed(
            .cannotFindHost, elapsed: 9.9, resourceTimeout: 10, responseBegun: false)
        else {
            Issue.record("expected a first, announced retry")
            return
        }
        #expect(abs(pause - 0.1) < 1e-9)
    }

    @Test func noTimeLeft_isOutOfTime() {
        var retry = ConnectivityRetry()
        #expect(retry.hopFailed(.dnsLookupFailed, elapsed: 10, resourceTimeout: 10, responseBegun: false) == .outOfTime)
    }

    @Test func libcurlsOwnTimeoutAtTheResourceTimeout_endsTheWaitingToo() {
        var retry = ConnectivityRetry()
        #expect(retry.hopFailed(.timedOut, elapsed: 10, resourceTimeout: 10, responseBegun: false) == .outOfTime)
    }

    @Test func aResponseAlreadyBegun_isNeverRetried() {
        var retry = ConnectivityRetry()
        #expect(retry.hopFailed(.cannotConnectToHost, elapsed: 0, resourceTimeout: 60, responseBegun: true) == .fail)
    }
}
