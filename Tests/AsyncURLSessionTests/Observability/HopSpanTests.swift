import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import InMemoryTracing
import LoopbackServer
import Testing
import TestSupport
import Tracing

@testable import AsyncURLSession

/// Issue 58: the task's span is the logical operation (INTERNAL) and each
/// request it sends is a CLIENT span beneath it, whose id is the one the
/// trace headers of that request carry.
@Suite struct HopSpanTests {
    static func int(_ span: FinishedInMemorySpan, _ key: String) -> Int64? {
        if case .int64(let value)? = span.attributes[key]?.toSpanAttribute() { return value }
        return nil
    }

    static func string(_ span: FinishedInMemorySpan, _ key: String) -> String? {
        if case .string(let value)? = span.attributes[key]?.toSpanAttribute() { return value }
        return nil
    }

    static func configuration(_ tracer: InMemoryTracer) -> SessionConfiguration {
        var configuration = testConfiguration()
        configuration.tracer = tracer
        return configuration
    }

    /// The task's span and its hop spans, in the order they started.
    static func layout(_ tracer: InMemoryTracer) throws -> (task: FinishedInMemorySpan, hops: [FinishedInMemorySpan]) {
        let spans = tracer.finishedSpans
        // The task's span: internal, and not the test's own "caller".
        let tasks = spans.filter { $0.kind == .internal && $0.operationName != "caller" }
        try #require(tasks.count == 1, "\(spans.map { ($0.operationName, $0.kind) })")
        let hops = spans.filter { $0.parentSpanID == tasks[0].spanID }.sorted { $0.startInstant.nanosecondsSinceEpoch < $1.startInstant.nanosecondsSinceEpoch }
        return (tasks[0], hops)
    }

    @Test func aRedirectChain_isATaskSpan_withAClientSpanPerHop_eachNamedByItsTraceHeaders() async throws {
        let tracer = InMemoryTracer()
        try await withServer { server in
            let parent = try await tracer.withSpan("caller") { span in
                let task = Session(configuration: Self.configuration(tracer)).dataTask(with: server.url("/redirect/2"))
                task.resume()
                for try await _ in task.events {}
                return span.spanID
            }
            let (task, hops) = try Self.layout(tracer)
            #expect(task.parentSpanID == parent)
            #expect(task.operationName == "GET")
            #expect(Self.int(task, "http.response.status_code") == 200)
            #expect(Self.int(task, "http.request.resend_count") == 2)
            #expect(!task.events.contains { $0.name == "http.attempt" })

            try #require(hops.count == 3)
            #expect(hops.allSatisfy { $0.kind == .client && $0.operationName == "GET" && $0.traceID == task.traceID })
            #expect(Set(hops.map(\.spanID)).count == 3)
            #expect(hops.map { Self.string($0, "url.full") } == [0, 1, 2].map { server.url("/redirect/\(2 - $0)").absoluteString })
            #expect(hops.map { Self.int($0, "http.response.status_code") } == [302, 302, 200])
            #expect(hops.map { Self.int($0, "http.request.resend_count") } == [nil, 1, 2])
            #expect(hops.allSatisfy { Self.string($0, "server.address") == "127.0.0.1" })
            #expect(hops.allSatisfy { Self.int($0, "server.port") == Int64(server.port) })
            #expect(hops.allSatisfy { Self.string($0, "user_agent.original") == "AsyncURLSession" })
            #expect(hops.allSatisfy { Self.string($0, "network.peer.address") == "127.0.0.1" })
            #expect(hops.allSatisfy { Self.int($0, "network.peer.port") == Int64(server.port) })
            #expect(hops.allSatisfy { Self.string($0, "network.protocol.version") == "1.1" })
            #expect(Self.int(hops[2], "http.response.body.size") == 4)  // "done"
            #expect(hops.allSatisfy { $0.status == nil })
            // libcurl's timings as events of the hop that had them: the
            // first opened the connection, each had a first byte.
            #expect(hops[0].events.contains { $0.name == "connect" })
            #expect(hops.allSatisfy { $0.events.contains { $0.name == "first_byte" } })
            // The trace headers each request carried name its own span.
            let injected = tracer.performedContextInjections.map { $0.values[InMemoryTracer.spanIDKey] }
            #expect(injected == hops.map(\.spanID))
        }
    }

    @Test func theTraceHeadersTheServerReceives_nameTheLastHopsSpan() async throws {
        let tracer = InMemoryTracer()
        try await withServer { server in
            // /redirect-to (302) -> /redirect-echo (302) -> /echo.
            let url = server.url("/redirect-to?location=%2Fredirect-echo")
            let (data, _) = try await Session(configuration: Self.configuration(tracer)).data(from: url)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            let (task, hops) = try Self.layout(tracer)
            try #require(hops.count == 3)
            #expect(echo.value(of: InMemoryTracer.spanIDKey) == hops[2].spanID)
            #expect(echo.value(of: InMemoryTracer.traceIDKey) == task.traceID)
            #expect(Self.string(hops[2], "url.full") == server.url("/echo").absoluteString)
            #expect(echo.value(of: InMemoryTracer.spanIDKey) != task.spanID)
        }
    }

    @Test func aRefusedConnection_isAFailedHop_withAReadableException() async throws {
        let tracer = InMemoryTracer()
        try await withTimeLimit(30) {
            let session = Session(configuration: Self.configuration(tracer))
            let task = session.dataTask(with: URL(string: "http://127.0.0.1:1/")!)
            task.resume()
            await #expect(throws: URLError.self) { for try await _ in task.events {} }
            let (taskSpan, hops) = try Self.layout(tracer)
            try #require(hops.count == 1)
            for span in [taskSpan, hops[0]] {
                #expect(Self.string(span, "error.type") == "cannotConnectToHost")
                #expect(span.status?.code == .error)
                try #require(span.errors.count == 1)
                let message = String(describing: span.errors[0].error)
                #expect(!message.contains("Error Domain"), "\(message)")
                #expect(message.contains("127.0.0.1"), "\(message)")
                #expect(String(describing: type(of: span.errors[0].error)) == "URLError")
                #expect(span.status?.message == message)
            }
            #expect(Self.int(hops[0], "http.response.status_code") == nil)
        }
    }

    @Test func a404_isAFailedHop_typedByItsStatus() async throws {
        let tracer = InMemoryTracer()
        try await withServer { server in
            _ = try await Session(configuration: Self.configuration(tracer)).data(from: server.url("/status/404"))
            let (task, hops) = try Self.layout(tracer)
            try #require(hops.count == 1)
            for span in [task, hops[0]] {
                #expect(Self.string(span, "error.type") == "404")
                #expect(Self.int(span, "http.response.status_code") == 404)
                #expect(span.status?.code == .error)
            }
        }
    }

    @Test func aPOST_hasItsBodySizes_onItsClientSpan() async throws {
        let tracer = InMemoryTracer()
        try await withServer { server in
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "POST"
            request.setValue("tests/1.0", forHTTPHeaderField: "User-Agent")
            let task = Session(configuration: Self.configuration(tracer)).uploadTask(with: request, from: Data(count: 1000))
            task.resume()
            for try await _ in task.events {}
            let (_, hops) = try Self.layout(tracer)
            try #require(hops.count == 1)
            #expect(Self.int(hops[0], "http.request.body.size") == 1000)
            #expect((Self.int(hops[0], "http.response.body.size") ?? 0) > 0)
            #expect(Self.string(hops[0], "user_agent.original") == "tests/1.0")
        }
    }
}
