import Foundation
import Testing
@testable import BackgroundAgent
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The background retry rule as a table: pauses double to the longest,
/// and none ends past the resource timeout.
@Suite struct RetryScheduleTests {
    @Test func pausesDouble_upToTheLongest() {
        var schedule = RetrySchedule(.background(firstPause: 1, longestPause: 5, resourceTimeout: 1_000))
        let pauses = (0..<6).map { _ in schedule.next(after: URLError(.networkConnectionLost), elapsed: 0) }
        #expect(pauses == [1, 2, 4, 5, 5, 5].map { .retry(after: $0) })
    }

    @Test func aPauseEndingPastTheResourceTimeout_fails() {
        var schedule = RetrySchedule(.background(firstPause: 1, longestPause: 60, resourceTimeout: 10))
        #expect(schedule.next(after: URLError(.cannotConnectToHost), elapsed: 8.5) == .retry(after: 1))
        #expect(schedule.next(after: URLError(.cannotConnectToHost), elapsed: 8.5) == .fail)
    }

    @Test(arguments: [URLError.Code.badURL, .cancelled, .userAuthenticationRequired, .serverCertificateUntrusted])
    func errorsOfTheRequest_areNotRetried(code: URLError.Code) {
        var schedule = RetrySchedule(.background())
        #expect(schedule.next(after: URLError(code), elapsed: 0) == .fail)
    }

    @Test(arguments: [URLError.Code.networkConnectionLost, .timedOut, .cannotConnectToHost, .cannotFindHost])
    func networkErrors_areRetried(code: URLError.Code) {
        var schedule = RetrySchedule(.background())
        #expect(schedule.next(after: URLError(code), elapsed: 0) == .retry(after: 1))
    }
}
