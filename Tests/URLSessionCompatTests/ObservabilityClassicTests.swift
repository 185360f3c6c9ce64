import Foundation
import InMemoryTracing
import LoopbackServer
import Metrics
import MetricsTestKit
import Testing
import TestSupport
import Tracing
import URLSessionCompat

/// Issue 47: the classic adapter's tasks are core tasks, so they make the
/// same spans and metrics. The tracer and factory are bound for this test
/// only (`withTracer`, `withMetricsFactory`: task-local), as a bootstrapped
/// one would be for the process: URLSessionConfiguration has no tracer of
/// its own.
@Suite struct ObservabilityClassicTests {
    @Test func classicDataTask_makesAClientSpan_andMetrics_withTheBoundTracerAndFactory() async throws {
        try await withServer { server in
            let tracer = InMemoryTracer()
            let metrics = TestMetrics()
            let url = server.url("/redirect/1")
            let status = try await withTracer(tracer) {
                try await withMetricsFactory(metrics) {
                    let session = URLSession(configuration: .ephemeral)
                    defer { session.finishTasksAndInvalidate() }
                    let (_, response) = try await session.data(from: url)
                    return (response as? HTTPURLResponse)?.statusCode
                }
            }
            #expect(status == 200)
            let spans = tracer.finishedSpans
            #expect(spans.count == 1)
            #expect(spans.first?.kind == .client)
            #expect(spans.first?.operationName == "GET")
            #expect(spans.first?.events.filter { $0.name == "http.attempt" }.count == 2)
            let dimensions = [("method", "GET"), ("scheme", "http"), ("status_class", "2xx")]
            #expect(try metrics.expectCounter("asyncurlsession.requests.finished", dimensions).totalValue == 1)
            #expect(try metrics.expectCounter("asyncurlsession.redirects", [("method", "GET"), ("scheme", "http")]).totalValue == 1)
        }
    }
}
