import Foundation
import InMemoryTracing
import LoopbackServer
import Metrics
import MetricsTestKit
import Testing
import TestSupport
import Tracing
import URLSessionCompat

/// Issues 47 and 58: the classic adapter's tasks are core tasks, so they
/// make the same spans and metrics. The tracer and factory are bound for this test
/// only (`withTracer`, `withMetricsFactory`: task-local), as a bootstrapped
/// one would be for the process: URLSessionConfiguration has no tracer of
/// its own.
@Suite struct ObservabilityClassicTests {
    @Test func classicDataTask_makesATaskSpanWithAClientSpanPerHop_andMetrics_withTheBoundTracerAndFactory() async throws {
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
            // The task's span (the logical operation) and a client span per request.
            let task = spans.filter { $0.kind == .internal }
            #expect(task.count == 1)
            #expect(task.first?.operationName == "GET")
            let hops = spans.filter { $0.kind == .client && $0.parentSpanID == task.first?.spanID }
            #expect(hops.count == 2)
            #expect(hops.allSatisfy { $0.operationName == "GET" })
            // A request measured per hop: the redirect, then the 200.
            let requests = metrics.timers.filter { $0.label == "http.client.request.duration" }
            let statuses = requests.flatMap { timer in
                timer.dimensions.filter { $0.0 == "http.response.status_code" }.map(\.1)
            }
            #expect(statuses.sorted() == ["200", "302"])
            #expect(requests.allSatisfy { $0.dimensions.contains { $0 == ("http.request.method", "GET") } })
            #expect(requests.allSatisfy { $0.dimensions.contains { $0 == ("unit", "s") } })
        }
    }
}
