import AsyncURLSession
import AsyncURLSessionTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// Hops beyond redirects: each retry is an entry, a hop without a response
/// says why, and a revalidation shows both the 304 and what it kept.
@Suite struct HARRecorderHopTests {
    @Test func eachRetry_isAnEntry_andAResetSaysSo() async throws {
        try await withServer { server in
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("retries.har")
                var configuration = SessionConfiguration.ephemeral
                configuration.retryPolicy = RetryPolicy(maximumAttempts: 4, initialBackoff: 0.01, jitter: 0, budget: nil)
                configuration.harRecorder = try HARRecorder(fileURL: file)
                let session = Session(configuration: configuration)
                let (data, _) = try await session.data(for: URLRequest(url: server.url("/flaky/har-503?fail=2")))
                #expect(String(decoding: data, as: UTF8.self) == "ok after 3")
                // A session of its own: on a reused connection libcurl itself
                // sends again a request the server reset, in the same transfer.
                _ = try await Session(configuration: configuration).data(
                    for: URLRequest(url: server.url("/flaky/har-reset?fail=1&how=reset")))
                let har = try HARFileCheck(file)
                #expect(har.statuses == [503, 503, 200, 0, 200])
                #expect(har.entries.map { har.headerValues("X-Attempt", in: har.response($0)).first ?? "-" }
                    == ["1", "2", "3", "-", "2"])
                #expect(har.body(har.entries[1]) == Data("status 503".utf8))
                #expect(har.entries[3]["_error"] as? String == "No response.")
            }
        }
    }

    @Test func revalidation_recordsThe304_andReplaysTheKeptBody() async throws {
        try await withServer { server in
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("revalidation.har")
                var configuration = SessionConfiguration.ephemeral
                configuration.harRecorder = try HARRecorder(fileURL: file)
                let session = Session(configuration: configuration)
                let url = server.url("/cache?cc=no-cache&etag=%22v1%22")
                let (first, _) = try await session.data(for: URLRequest(url: url))
                let (second, response) = try await session.data(for: URLRequest(url: url))
                // The stored representation answered after the 304.
                #expect(second == first)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                let har = try HARFileCheck(file)
                let statuses = har.statuses
                // The first answer; the conditional request and its 304; the
                // stored response that then answered (nothing sent for it).
                #expect(statuses == [200, 304, 200])
                let revalidation = har.entries[1]
                #expect(har.headerValues("If-None-Match", in: har.request(revalidation)) == ["\"v1\""])
                #expect(har.headerValues("ETag", in: har.response(revalidation)) == ["\"v1\""])
                #expect(revalidation["_error"] == nil)
                #expect(har.entries[2]["comment"] as? String == "Answered by the response cache.")
                #expect(har.body(har.entries[2]) == first)
                #expect(har.response(har.entries[2])["bodySize"] as? Int == 0)

                // Replayed, the 304 answers the conditional request and the
                // session's own cache does the rest, as live.
                let replaying = try HARReplay(contentsOf: file)
                var replayConfiguration = SessionConfiguration.ephemeral
                replayConfiguration.localTransport = replaying
                let replaySession = Session(configuration: replayConfiguration)
                #expect(try await replaySession.data(for: URLRequest(url: url)).0 == first)
                #expect(try await replaySession.data(for: URLRequest(url: url)).0 == first)
                #expect(replaying.answeredCount == 2)
            }
        }
    }
}
