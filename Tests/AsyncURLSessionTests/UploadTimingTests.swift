import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing
import TestSupport

import AsyncURLSession

/// A transaction's response starts when the server's answer starts, for
/// uploads too (libcurl 7.88.1's start-transfer time is when the upload
/// began: it put `responseStartDate` before the server had said anything).
@Suite struct UploadTimingTests {
    @Test func anUploadAnsweredLate_startsItsResponseWhenTheAnswerCame() async throws {
        try await withServer { server in
            // The server reads the whole 1 MiB, then waits 200 ms to answer.
            var request = URLRequest(url: server.url("/delay/200"))
            request.httpMethod = "PUT"
            let task = Session(configuration: testConfiguration())
                .uploadTask(with: request, from: LoopbackServer.patternBody(count: 1 << 20))
            task.resume()
            for try await _ in task.events {}
            let transaction = try #require(task.metrics?.transactionMetrics.last)
            let requestStart = try #require(transaction.requestStartDate)
            let responseStart = try #require(transaction.responseStartDate)
            let responseEnd = try #require(transaction.responseEndDate)
            // The gap is the server's own wait, not a speed of ours.
            #expect(responseStart.timeIntervalSince(requestStart) >= 0.19)
            #expect(responseEnd >= responseStart)
            #expect(transaction.countOfRequestBodyBytesSent == 1 << 20)
        }
    }

    @Test func aGet_startsItsResponseBetweenItsRequestAndItsEnd() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/delay/50"))
            task.resume()
            for try await _ in task.events {}
            let transaction = try #require(task.metrics?.transactionMetrics.last)
            let requestStart = try #require(transaction.requestStartDate)
            let responseStart = try #require(transaction.responseStartDate)
            #expect(responseStart.timeIntervalSince(requestStart) >= 0.045)
            #expect(try #require(transaction.responseEndDate) >= responseStart)
        }
    }
}
