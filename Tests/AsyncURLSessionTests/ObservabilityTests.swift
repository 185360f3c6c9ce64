import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import InMemoryTracing
import LoopbackServer
import Metrics
import MetricsTestKit
import ServiceContextModule
import Synchronization
import Testing
import Tracing

@testable import AsyncURLSession

/// Issue 47: spans (InMemoryTracer) and metrics (TestMetrics) of real
/// transfers against the loopback server. Each test gives its session a
/// tracer and a metrics factory of its own (`SessionConfiguration.tracer`,
/// `.metricsFactory`): nothing is bootstrapped globally in this process.
@Suite struct ObservabilityTests {
    private struct Observed {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()

        func configuration(trusting server: LoopbackServer? = nil) -> SessionConfiguration {
            var configuration = testConfiguration(trusting: server)
            configuration.tracer = tracer
            configuration.metricsFactory = metrics
            return configuration
        }

        /// The one client span the test made (a parent span of the test's
        /// own is left out).
        func clientSpan() throws -> FinishedInMemorySpan {
            let spans = tracer.finishedSpans.filter { $0.kind == .client }
            try #require(spans.count == 1, "\(spans.map(\.operationName))")
            return spans[0]
        }

        func counter(_ name: String, _ dimensions: [(String, String)]) -> Int64 {
            (try? metrics.expectCounter("asyncurlsession." + name, dimensions))?.totalValue ?? 0
        }
    }

    private static func int(_ span: FinishedInMemorySpan, _ key: String) -> Int64? {
        if case .int64(let value)? = span.attributes[key]?.toSpanAttribute() { return value }
        return nil
    }

    private static func string(_ span: FinishedInMemorySpan, _ key: String) -> String? {
        if case .string(let value)? = span.attributes[key]?.toSpanAttribute() { return value }
        return nil
    }

    private static func attempts(_ span: FinishedInMemorySpan) -> [SpanEvent] {
        span.events.filter { $0.name == "http.attempt" }
    }

    private static func eventInt(_ event: SpanEvent, _ key: String) -> Int64? {
        if case .int64(let value)? = event.attributes[key]?.toSpanAttribute() { return value }
        return nil
    }

    private static func eventString(_ event: SpanEvent, _ key: String) -> String? {
        if case .string(let value)? = event.attributes[key]?.toSpanAttribute() { return value }
        return nil
    }

    private static let get2xx = [("method", "GET"), ("scheme", "http"), ("status_class", "2xx")]
    private static let getHTTP = [("method", "GET"), ("scheme", "http")]

    // MARK: - Spans and metrics of transfers

    @Test func webSocket_isOneClientSpan_fromTheUpgradeToTheClose() async throws {
        let observed = Observed()
        try await withServer { server in
            let url = URL(string: "ws://127.0.0.1:\(server.port)/ws/echo")!
            let socket = Session(configuration: observed.configuration()).webSocketTask(with: url)
            socket.resume()
            try await socket.send(.string("traced"))
            #expect(try await socket.receive() == .string("traced"))
            socket.cancel(with: .normalClosure, reason: nil)
            // The span ends with the connection, after the close handshake.
            for _ in 0..<200 where observed.tracer.finishedSpans.isEmpty {
                try await Task.sleep(for: .milliseconds(10))
            }
            let span = try observed.clientSpan()
            #expect(span.operationName == "GET")
            #expect(Self.string(span, "url.full") == url.absoluteString)
            #expect(Self.int(span, "http.response.status_code") == 101)
            #expect(Self.attempts(span).count == 1)
            #expect(span.status?.code != .error)
            #expect(observed.counter("requests.started", [("method", "GET"), ("scheme", "ws")]) == 1)
        }
    }

    /// A hand-written HTTP/1.1 request the server answers and then closes.
    private static func closingRequest(_ path: String) -> Data {
        Data("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
    }

    /// Reads `stream` until the peer closes it (bounded).
    private static func readToEnd(_ stream: StreamTask) async throws -> Data {
        var all = Data()
        for _ in 0..<10_000 {
            let (data, atEOF) = try await stream.read(minLength: 1, maxLength: 65536, timeout: scaledTimeout(10))
            all.append(data)
            if atEOF { break }
        }
        return all
    }

    /// Waits (bounded) until the tracer has a finished client span.
    private static func waitForAClientSpan(_ tracer: InMemoryTracer) async throws {
        for _ in 0..<500 where !tracer.finishedSpans.contains(where: { $0.kind == .client }) {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func streamTask_isOneClientSpan_fromItsConnectionToItsEnd_underTheCallersSpan() async throws {
        let observed = Observed()
        try await withServer { server in
            let session = Session(configuration: observed.configuration())
            let stream = session.streamTask(withHostName: "127.0.0.1", port: server.port)
            stream.resume()
            let parent = try await observed.tracer.withSpan("caller") { span in
                // The first write opens the connection: the span starts there.
                try await stream.write(Self.closingRequest("/bytes/10"), timeout: scaledTimeout(10))
                return span.spanID
            }
            let response = try await Self.readToEnd(stream)
            #expect(response.suffix(10) == LoopbackServer.patternBody(count: 10))
            try await Self.waitForAClientSpan(observed.tracer)
            let span = try observed.clientSpan()
            #expect(span.operationName == "stream")
            #expect(span.parentSpanID == parent)
            #expect(Self.string(span, "server.address") == "127.0.0.1")
            #expect(Self.int(span, "server.port") == Int64(server.port))
            #expect(Self.string(span, "network.transport") == "tcp")
            #expect(span.attributes["asyncurlsession.tls"]?.toSpanAttribute() == .bool(false))
            #expect(span.status == nil)
            // Bytes, not an HTTP request: not in the request metrics.
            #expect(observed.metrics.counters.isEmpty)
        }
    }

    @Test func streamTask_observedLaterByItsUser_stillEndsItsSpan() async throws {
        let observed = Observed()
        try await withServer { server in
            let stream = Session(configuration: observed.configuration())
                .streamTask(withHostName: "127.0.0.1", port: server.port)
            // The request's first half: the server waits for the rest.
            let request = Self.closingRequest("/bytes/10")
            let half = request.count / 2
            try await stream.write(request.prefix(half), timeout: scaledTimeout(10))
            // Set once the connection (and its span) had started.
            let ended = Mutex(false)
            stream.observeLifecycle { event in
                if case .ended = event { ended.withLock { $0 = true } }
            }
            try await stream.write(request.suffix(from: half), timeout: scaledTimeout(10))
            _ = try await Self.readToEnd(stream)
            try await Self.waitForAClientSpan(observed.tracer)
            #expect(try observed.clientSpan().operationName == "stream")
            #expect(ended.withLock { $0 })
        }
    }

    @Test func redirectChain_isOneClientSpan_underTheCallersSpan_withAnAttemptPerHop() async throws {
        let observed = Observed()
        try await withServer { server in
            let session = Session(configuration: observed.configuration())
            let url = server.url("/redirect/2")
            let parent = try await observed.tracer.withSpan("caller") { span in
                _ = try await session.data(from: url)
                return (span.traceID, span.spanID)
            }
            let span = try observed.clientSpan()
            #expect(span.operationName == "GET")
            #expect(span.traceID == parent.0)
            #expect(span.parentSpanID == parent.1)
            #expect(Self.string(span, "http.request.method") == "GET")
            #expect(Self.string(span, "server.address") == "127.0.0.1")
            #expect(Self.int(span, "server.port") == Int64(server.port))
            #expect(Self.string(span, "url.full") == url.absoluteString)
            #expect(Self.int(span, "http.response.status_code") == 200)
            #expect(Self.string(span, "network.protocol.name") == "http")
            #expect(Self.string(span, "network.protocol.version") == "1.1")
            #expect(Self.int(span, "http.request.resend_count") == 2)
            #expect(span.status == nil)
            let attempts = Self.attempts(span)
            #expect(attempts.map { Self.eventInt($0, "http.response.status_code") } == [302, 302, 200])
            #expect(attempts.map { Self.eventInt($0, "http.request.resend_count") } == [nil, 1, 2])
            // libcurl's timings, as timed events: a connect on the first hop.
            #expect(span.events.contains { $0.name == "connect" })
            #expect(span.events.contains { $0.name == "first_byte" })
            #expect(attempts.allSatisfy { $0.attributes["asyncurlsession.timing.total"] != nil })

            #expect(observed.counter("requests.started", Self.getHTTP) == 1)
            #expect(observed.counter("requests.finished", Self.get2xx) == 1)
            #expect(observed.counter("redirects", Self.getHTTP) == 2)
            #expect(observed.counter("bytes.received", Self.getHTTP) > 0)
            let timer = try observed.metrics.expectTimer("asyncurlsession.request.duration", Self.get2xx)
            #expect(timer.values.count == 1 && timer.values[0] > 0)
        }
    }

    @Test func basic401ThenCredential_isAResend_andTheSpanEndsOK() async throws {
        let observed = Observed()
        try await withServer { server in
            let task = Session(configuration: observed.configuration())
                .dataTask(with: server.url("/auth/basic?user=u&password=p"))
            task.resume()
            for try await event in task.events {
                if case .challenge(let decision) = event {
                    decision.useCredential(URLCredential(user: "u", password: "p", persistence: .none))
                }
            }
            let span = try observed.clientSpan()
            #expect(Self.int(span, "http.response.status_code") == 200)
            #expect(Self.int(span, "http.request.resend_count") == 1)
            #expect(span.status == nil)
            #expect(span.attributes["error.type"] == nil)
            #expect(Self.attempts(span).map { Self.eventInt($0, "http.response.status_code") } == [401, 200])
            #expect(observed.counter("requests.finished", Self.get2xx) == 1)
            #expect(observed.counter("redirects", Self.getHTTP) == 0)
        }
    }

    @Test func status404_isAnErrorSpan_typedByItsCode() async throws {
        let observed = Observed()
        try await withServer { server in
            _ = try await Session(configuration: observed.configuration()).data(from: server.url("/status/404"))
            let span = try observed.clientSpan()
            #expect(Self.int(span, "http.response.status_code") == 404)
            #expect(Self.string(span, "error.type") == "404")
            #expect(span.status?.code == .error)
            #expect(observed.counter("requests.finished", [("method", "GET"), ("scheme", "http"), ("status_class", "4xx")]) == 1)
        }
    }

    @Test func tlsFailure_isAnErrorSpan_namedByTheURLErrorCode_andCounted() async throws {
        let observed = Observed()
        try await withServer(LoopbackServer.Options(tls: true, certificate: .issuedByTestCA)) { server in
            let session = Session(configuration: observed.configuration())
            let url = server.url("/bytes/1")
            let code = await #expect(throws: URLError.self) { _ = try await session.data(from: url) }?.code
            let name = code.map(TaskObservation.name(of:))
            #expect(name == "serverCertificateHasUnknownRoot" || name == "serverCertificateUntrusted")
            let span = try observed.clientSpan()
            #expect(Self.string(span, "error.type") == name)
            #expect(span.status?.code == .error)
            #expect(span.errors.count == 1)
            // The handshake that named the missing root sent nothing: not an attempt.
            #expect(Self.attempts(span).count == 1)
            #expect(span.attributes["http.request.resend_count"] == nil)
            #expect(Self.string(span, "url.full")?.hasPrefix("https://127.0.0.1:") == true)
            #expect(Self.int(span, "server.port") == Int64(server.port))
            let https = [("method", "GET"), ("scheme", "https")]
            #expect(observed.counter("errors", https + [("error", name ?? "")]) == 1)
            #expect(observed.counter("requests.finished", https + [("status_class", "error")]) == 1)
        }
    }

    @Test func cancelledTask_endsItsSpan_cancelled() async throws {
        let observed = Observed()
        try await withServer { server in
            let task = Session(configuration: observed.configuration()).dataTask(with: server.url("/delay/5000"))
            #expect(task.collectBody())
            task.resume()
            task.cancel()
            await withCheckedContinuation { continuation in
                task.whenCollectionEnds { continuation.resume() }
            }
            let span = try observed.clientSpan()
            #expect(Self.string(span, "error.type") == "cancelled")
            #expect(span.status?.code == .error)
            #expect(observed.counter("errors", Self.getHTTP + [("error", "cancelled")]) == 1)
            #expect(observed.counter("requests.finished", Self.getHTTP + [("status_class", "error")]) == 1)
        }
    }

    @Test func cacheHit_isAnAttemptViaTheCache_andCounted() async throws {
        let observed = Observed()
        try await withServer { server in
            var configuration = observed.configuration()
            configuration.responseCache = ResponseCache(memoryCapacity: 4 << 20)
            let session = Session(configuration: configuration)
            let url = server.url("/cache?cc=max-age=600")
            let (first, _) = try await session.data(from: url)
            let (second, _) = try await session.data(from: url)
            #expect(first == second)
            let spans = observed.tracer.finishedSpans
            #expect(spans.count == 2)
            let vias = spans.map { Self.attempts($0).compactMap { Self.eventString($0, "asyncurlsession.via") } }
            #expect(vias == [["network"], ["cache"]])
            #expect(spans.allSatisfy { Self.int($0, "http.response.status_code") == 200 })
            #expect(observed.counter("cache.hits", Self.getHTTP) == 1)
            #expect(observed.counter("requests.finished", Self.get2xx) == 2)
        }
    }

    // MARK: - Trace headers

    @Test func traceHeaders_goOutWithTheRequest_naming_theTasksSpan() async throws {
        let observed = Observed()
        try await withServer { server in
            let (data, _) = try await Session(configuration: observed.configuration()).data(from: server.url("/echo"))
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            let span = try observed.clientSpan()
            #expect(echo.value(of: InMemoryTracer.traceIDKey) == span.traceID)
            #expect(echo.value(of: InMemoryTracer.spanIDKey) == span.spanID)
        }
    }

    @Test func traceHeaders_followASameOriginRedirect() async throws {
        let observed = Observed()
        try await withServer { server in
            let url = server.url("/redirect-to?status=302&location=/echo")
            let (data, _) = try await Session(configuration: observed.configuration()).data(from: url)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.value(of: InMemoryTracer.spanIDKey) == (try observed.clientSpan()).spanID)
        }
    }

    @Test func traceHeaders_stayWithTheOrigin_onACrossOriginRedirect_unlessAllowed() async throws {
        try await withServer { first in
            let second = try await LoopbackServer.start()
            defer { Task { try? await second.shutdown() } }
            let url = first.url("/cross-origin-redirect?port=\(second.port)")
            for allowed in [false, true] {
                let observed = Observed()
                var configuration = observed.configuration()
                configuration.propagatesTraceContextAcrossOrigins = allowed
                let (data, _) = try await Session(configuration: configuration).data(from: url)
                let echo = try JSONDecoder().decode(Echo.self, from: data)
                let span = try observed.clientSpan()
                #expect(echo.value(of: InMemoryTracer.spanIDKey) == (allowed ? span.spanID : nil), "allowed: \(allowed)")
                #expect(echo.value(of: InMemoryTracer.traceIDKey) == (allowed ? span.traceID : nil))
                // The first hop (same origin) carried them either way.
                #expect(observed.tracer.performedContextInjections.count == (allowed ? 2 : 1))
            }
        }
    }

    // MARK: - Names and redaction

    @Test func urlFull_losesTheUserAndPassword_andSensitiveQueryValues() async throws {
        let observed = Observed()
        try await withServer { server in
            let url = URL(string: "http://ann:pw@127.0.0.1:\(server.port)/echo?token=abc&page=2&Signature=s")!
            _ = try await Session(configuration: observed.configuration()).data(from: url)
            let span = try observed.clientSpan()
            #expect(
                Self.string(span, "url.full")
                    == "http://127.0.0.1:\(server.port)/echo?token=REDACTED&page=2&Signature=REDACTED")
        }
    }

    @Test func nonstandardMethod_isNamedHTTP_withTheOriginalKept() async throws {
        let observed = Observed()
        try await withServer { server in
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "PURGE"
            _ = try await Session(configuration: observed.configuration()).data(for: request)
            let span = try observed.clientSpan()
            #expect(span.operationName == "HTTP")
            #expect(Self.string(span, "http.request.method") == "_OTHER")
            #expect(Self.string(span, "http.request.method_original") == "PURGE")
            #expect(observed.counter("requests.started", [("method", "_OTHER"), ("scheme", "http")]) == 1)
        }
    }

    @Test func metricsPrefix_andHostDimension_areTheConfigurations() async throws {
        let metrics = TestMetrics()
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.metricsFactory = metrics
            configuration.metricsPrefix = "myapp.http"
            configuration.metricsIncludeHost = true
            _ = try await Session(configuration: configuration).data(from: server.url("/bytes/10"))
            let dimensions = [("method", "GET"), ("scheme", "http"), ("host", "127.0.0.1")]
            #expect(try metrics.expectCounter("myapp.http.requests.started", dimensions).totalValue == 1)
            #expect(try metrics.expectCounter("myapp.http.bytes.received", dimensions).totalValue == 10)
            #expect(metrics.counters.allSatisfy { $0.label.hasPrefix("myapp.http.") })
        }
    }

    // MARK: - Off

    /// Nothing bootstrapped and nothing configured: no observation is made
    /// (each hook is then one nil check), and deciding so is cheap.
    @Test func off_makesNoObservation_andTheCheckIsCheap() throws {
        let configuration = SessionConfiguration.ephemeral
        let request = URLRequest(url: URL(string: "http://127.0.0.1:1/")!)
        #expect(TaskObservation.make(configuration: configuration, request: request) == nil)
        let rounds = 200_000
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for _ in 0..<rounds {
                if TaskObservation.make(configuration: configuration, request: request) != nil { Issue.record("made") }
            }
        }
        let nanoseconds = Double(elapsed.components.attoseconds) / 1e9 + Double(elapsed.components.seconds) * 1e9
        print("ObservabilityTests: the off check costs \(Int(nanoseconds / Double(rounds))) ns per task")
        // Generous: the check is two reads and two type checks (~100 ns);
        // a request costs tens of microseconds.
        #expect(nanoseconds / Double(rounds) < 5_000)
    }
}

/// The bootstrapped path (no tracer or factory on the configuration): bound
/// task-locally here (`withTracer`, `withMetricsFactory`), which is what
/// `InstrumentationSystem.instrument` and `MetricsSystem.factory` read
/// first, so nothing is bootstrapped for the whole process.
@Suite struct ObservabilityGlobalSystemTests {
    @Test func boundTracerAndFactory_areUsed_whenTheConfigurationHasNone() async throws {
        try await withServer { server in
            let tracer = InMemoryTracer()
            let metrics = TestMetrics()
            let url = server.url("/echo")
            let data = try await withTracer(tracer) {
                try await withMetricsFactory(metrics) {
                    try await Session(configuration: testConfiguration()).data(from: url).0
                }
            }
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            let spans = tracer.finishedSpans
            #expect(spans.count == 1)
            #expect(echo.value(of: InMemoryTracer.spanIDKey) == spans.first?.spanID)
            let dimensions = [("method", "GET"), ("scheme", "http"), ("status_class", "2xx")]
            #expect(try metrics.expectCounter("asyncurlsession.requests.finished", dimensions).totalValue == 1)
        }
    }

    @Test func aTaskMadeOutsideTheBinding_isNotObserved() async throws {
        try await withServer { server in
            let tracer = InMemoryTracer()
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/1"))
            // Made before the binding: the check is made once, when the task is made.
            try await withTracer(tracer) {
                task.resume()
                for try await _ in task.events {}
            }
            #expect(tracer.finishedSpans.isEmpty)
        }
    }
}
