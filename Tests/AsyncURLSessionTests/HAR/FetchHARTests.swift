import Foundation
import LoopbackServer
import Testing
import TestSupport

/// `fetch --har FILE`: the transfer, as a HAR a browser's tools open.
@Suite struct FetchHARTests {
    @Test func har_writesEachHopOfTheTransfer() async throws {
        let fetch = try fetchExecutablePath()
        try await withServer { server in
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("fetch.har")
                let result = try await ChildProcess.run(
                    fetch,
                    ["-s", "--har", file.path, "-H", "Authorization: Bearer fetch-s3cret", server.url("/redirect/1").absoluteString])
                #expect(result.status == 0, "\(result.errorText)")
                #expect(result.outputText.hasPrefix("done"))
                let har = try HARFileCheck(file)
                #expect(har.statuses == [302, 200])
                #expect(har.body(har.entries[1]) == Data("done".utf8))
                #expect(try !String(contentsOf: file, encoding: .utf8).contains("fetch-s3cret"))
            }
        }
    }

    @Test func har_inADirectoryThatIsNot_failsSayingSo() async throws {
        let fetch = try fetchExecutablePath()
        try await withTimeLimit {
            let result = try await ChildProcess.run(fetch, ["--har", "/nonexistent-dir/x.har", "http://127.0.0.1:9/"])
            #expect(result.status != 0)
            #expect(result.errorText.contains("--har"), "\(result.errorText)")
        }
    }
}
