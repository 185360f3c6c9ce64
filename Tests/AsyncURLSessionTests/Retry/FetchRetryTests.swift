import Foundation
import LoopbackServer
import Testing
import TestSupport

/// fetch's --retry, --retry-max-time and --retry-delay, with curl's names.
@Suite struct FetchRetryTests {
    @Test func retry_getsTheAnswerAfterFailures() async throws {
        let fetch = try fetchExecutablePath()
        try await withServer { server in
            let result = try await ChildProcess.run(fetch, [
                "-s", "--retry", "2", "--retry-delay", "0.01", server.url("/flaky/cli?fail=2").absoluteString,
            ])
            #expect(result.status == 0, "\(result.errorText)")
            #expect(String(decoding: result.output, as: UTF8.self) == "ok after 3")
            #expect(server.flakyRequests("cli") == 3)
        }
    }

    @Test func withoutRetry_theFailureIsTheAnswer() async throws {
        let fetch = try fetchExecutablePath()
        try await withServer { server in
            let result = try await ChildProcess.run(fetch, ["-s", server.url("/flaky/once?fail=1").absoluteString])
            #expect(String(decoding: result.output, as: UTF8.self) == "status 503")
            #expect(server.flakyRequests("once") == 1)
        }
    }

    @Test func retryMaxTime_stopsRetriesThatWouldStartLater() async throws {
        let fetch = try fetchExecutablePath()
        try await withServer { server in
            let result = try await ChildProcess.run(fetch, [
                "-s", "--retry", "5", "--retry-delay", "5", "--retry-max-time", "1",
                server.url("/flaky/late?fail=1").absoluteString,
            ])
            #expect(String(decoding: result.output, as: UTF8.self) == "status 503")
            #expect(server.flakyRequests("late") == 1)
        }
    }

    @Test func retryDelayWithoutRetry_isRefused() async throws {
        let fetch = try fetchExecutablePath()
        let result = try await ChildProcess.run(fetch, ["--retry-delay", "1", "http://127.0.0.1:1/"])
        #expect(result.status != 0)
        #expect(result.errorText.contains("--retry"))
    }
}
