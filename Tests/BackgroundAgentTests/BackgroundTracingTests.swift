import AsyncURLSession
import Foundation
import InMemoryTracing
import LoopbackServer
import Testing
import TestSupport
import Tracing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issues 47 and 58 for background sessions: the program that made a
/// background task sees it as a task span with one client span, as a
/// foreground task, while the agent runs its transfer.
@Suite struct BackgroundTracingTests {
    @Test func aBackgroundDownload_isOneClientSpanInTheProgram() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let tracer = InMemoryTracer()
            var configuration = sandbox.configuration("traced")
            configuration.tracer = tracer
            let task = Session(configuration: configuration).downloadTask(with: server.url("/range/200000"))
            task.resume()
            var file: Data?
            for try await event in task.events {
                if case .downloaded(let url) = event { file = try Data(contentsOf: url) }
            }
            #expect(file?.count == 200_000)
            let spans = tracer.finishedSpans.filter { $0.kind == .client }
            #expect(spans.count == 1)
            guard let span = spans.first else { return }
            #expect(span.operationName == "GET")
            if case .int64(let status)? = span.attributes["http.response.status_code"]?.toSpanAttribute() {
                #expect(status == 200)
            } else {
                Issue.record("the span has no status code: \(span.attributes)")
            }
            #expect(span.status?.code != .error)
            // Beneath the task's span (issue 58), as a foreground task's request.
            let tasks = tracer.finishedSpans.filter { $0.kind == .internal }
            #expect(tasks.count == 1)
            #expect(span.parentSpanID == tasks.first?.spanID)
        }
    }
}
