import Foundation
import LoopbackServer
import Testing
import TestSupport

/// `fetch --trace`: a person sees where a transfer's time went, without a
/// tracing backend.
@Suite struct FetchTraceTests {
    @Test func trace_showsTheTasksSpan_aClientSpanPerHop_andLibcurlsTimings() async throws {
        let fetch = try fetchExecutablePath()
        try await withServer { server in
            let result = try await ChildProcess.run(fetch, ["-s", "--trace", server.url("/redirect/1").absoluteString])
            #expect(result.status == 0, "\(result.errorText)")
            let trace = result.errorText
            #expect(trace.contains("span GET (internal)"), "\(trace)")
            #expect(trace.components(separatedBy: "  span GET (client)").count - 1 == 2, "\(trace)")
            #expect(trace.contains("first_byte"))
            #expect(trace.contains("http.response.status_code = 302"))
            #expect(trace.contains("http.response.status_code = 200"))
            #expect(trace.contains("http.request.resend_count = 1"))
        }
    }
}
