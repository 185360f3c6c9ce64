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

/// Issues 47 and 58: spans (InMemoryTracer) and metrics (TestMetrics) of
/// real transfers against the loopback server: a task's span (the logical
/// operation, INTERNAL) with a span per hop beneath it (CLIENT, or INTERNAL
/// for a cache hit), and OpenTelemetry's HTTP client metrics per request. Each test gives its session a
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

        /// The tasks' spans: those whose parent is not a span recorded
        /// here (a parent span of the test's own, "caller", is left out).
        func taskSpans() -> [FinishedInMemorySpan] {
            let spans = tracer.finishedSpans.filter { $0.operationName != "caller" }
            let recorded = Set(spans.map(\.spanID))
            return spans.filter { span in !(span.parentSpanID.map(recorded.contains) ?? false) }
        }

        /// The one task's span the test made.
        func taskSpan() throws -> FinishedInMemorySpan {
            let spans = taskSpans()
            try #require(spans.count == 1, "\(tracer.finishedSpans.map { ($0.operationName, $0.kind) })")
            return spans[0]
        }

        /// The hop spans of `task`, in the order they started.
        func hops(of task: FinishedInMemorySpan) -> [FinishedInMemorySpan] {
            tracer.finishedSpans.filter { $0.parentSpanID == task.spanID }
                .sorted { $0.startInstant.nanosecondsSinceEpoch < $1.startInstant.nanosecondsSinceEpoch }
        }

        /// How many requests `http.client.request.duration` measured with
        /// these attributes among its dimensions.
        func requests(_ attributes: [String: String]) -> Int {
            metrics.timers.filter { $0.label == "http.client.request.duration" }
                .filter { timer in
                    let dimensions = Dictionary(timer.dimensions, uniquingKeysWith: { first, _ in first })
                    return attributes.allSatisfy { dimensions[$0.key] == $0.value }
                }
                .reduce(0) { $0 + $1.values.count }
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

    private static let getHTTP = ["http.request.method": "GET", "url.scheme": "http"]

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
            // The spans end with the connection, after the close handshake.
            try await eventually { observed.tracer.finishedSpans.contains { $0.kind == .internal } }
            let task = try observed.taskSpan()
            let span = try observed.clientSpan()
            #expect(span.parentSpanID == task.spanID)
            #expect(span.operationName == "GET")
            #expect(Self.string(span, "url.full") == url.absoluteString)
            #expect(Self.int(span, "http.response.status_code") == 101)
            #expect(Self.int(task, "http.response.status_code") == 101)
            #expect(observed.hops(of: task).count == 1)
            #expect(span.status?.code != .error)
            #expect(observed.requests(["http.request.method": "GET", "url.scheme": "ws"]) == 1)
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
        try await eventually { tracer.finishedSpans.contains { $0.kind == .client } }
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
            #expect(observed.metrics.timers.allSatisfy { $0.label != "http.client.request.duration" })
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

    @Test func redirectChain_isATaskSpan_underTheCallersSpan_withAClientSpanPerHop() async throws {
        let observed = Observed()
        try await withServer { server in
            let session = Session(configuration: observed.configuration())
            let url = server.url("/redirect/2")
            let parent = try await observed.tracer.withSpan("caller") { span in
                _ = try await session.data(from: url)
                return (span.traceID, span.spanID)
            }
            let span = try observed.taskSpan()
            #expect(span.kind == .internal)
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
            let hops = observed.hops(of: span)
            #expect(hops.allSatisfy { $0.kind == .client && $0.traceID == parent.0 })
            #expect(hops.map { Self.int($0, "http.response.status_code") } == [302, 302, 200])
            #expect(hops.map { Self.int($0, "http.request.resend_count") } == [nil, 1, 2])
            // libcurl's timings, as timed events of each hop: a connect on the first.
            #expect(hops.first?.events.contains { $0.name == "connect" } == true)
            #expect(hops.allSatisfy { $0.events.contains { $0.name == "first_byte" } })
            #expect(hops.allSatisfy { $0.attributes["asyncurlsession.timing.total"] != nil })

            // A request measured per hop: two redirects, then the 200.
            #expect(observed.requests(Self.getHTTP) == 3)
            #expect(observed.requests(Self.getHTTP.merging(["http.response.status_code": "302"]) { $1 }) == 2)
            let timer = try #require(observed.metrics.timers.first {
                $0.label == "http.client.request.duration"
                    && $0.dimensions.contains { $0 == ("http.response.status_code", "200") }
            })
            #expect(timer.values.count == 1 && timer.values[0] > 0)
            let received = observed.metrics.recorders.filter { $0.label == "http.client.response.body.size" }
            #expect(received.flatMap(\.values).reduce(0, +) > 0)
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
            let span = try observed.taskSpan()
            #expect(Self.int(span, "http.response.status_code") == 200)
            #expect(Self.int(span, "http.request.resend_count") == 1)
            #expect(span.status == nil)
            #expect(span.attributes["error.type"] == nil)
            let hops = observed.hops(of: span)
            #expect(hops.map { Self.int($0, "http.response.status_code") } == [401, 200])
            #expect(hops.map { Self.int($0, "http.request.resend_count") } == [nil, 1])
            // The 401 is a failed request of its own; the task is not.
            #expect(hops.map { Self.string($0, "error.type") } == ["401", nil])
            #expect(observed.requests(Self.getHTTP.merging(["http.response.status_code": "200"]) { $1 }) == 1)
            #expect(observed.requests(Self.getHTTP.merging(["error.type": "401"]) { $1 }) == 1)
            #expect(observed.requests(Self.getHTTP.merging(["http.response.status_code": "302"]) { $1 }) == 0)
        }
    }

    @Test func status404_isAnErrorSpan_typedByItsCode() async throws {
        let observed = Observed()
        try await withServer { server in
            _ = try await Session(configuration: observed.configuration()).data(from: server.url("/status/404"))
            let span = try observed.taskSpan()
            #expect(Self.int(span, "http.response.status_code") == 404)
            #expect(Self.string(span, "error.type") == "404")
            #expect(span.status?.code == .error)
            #expect(observed.requests(["http.response.status_code": "404", "error.type": "404"]) == 1)
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
            let span = try observed.taskSpan()
            #expect(Self.string(span, "error.type") == name)
            #expect(span.status?.code == .error)
            #expect(span.errors.count == 1)
            // The handshake that named the missing root sent nothing: not an
            // attempt, the same hop going on.
            #expect(observed.hops(of: span).count == 1)
            #expect(observed.hops(of: span).first.map { Self.string($0, "error.type") } == name)
            #expect(span.attributes["http.request.resend_count"] == nil)
            #expect(Self.string(span, "url.full")?.hasPrefix("https://127.0.0.1:") == true)
            #expect(Self.int(span, "server.port") == Int64(server.port))
            #expect(observed.requests(["url.scheme": "https", "error.type": name ?? ""]) == 1)
            #expect(observed.requests(["url.scheme": "https"]) == 1)
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
            let span = try observed.taskSpan()
            #expect(Self.string(span, "error.type") == "cancelled")
            #expect(span.status?.code == .error)
            // A request that went out ended cancelled too, and none is left active.
            #expect(observed.hops(of: span).allSatisfy { Self.string($0, "error.type") == "cancelled" })
            #expect(observed.requests(Self.getHTTP) == observed.requests(["error.type": "cancelled"]))
            #expect(observed.metrics.meters.filter { $0.label == "http.client.active_requests" }.allSatisfy { $0.lastValue == 0 })
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
            let spans = observed.taskSpans()
                .sorted { $0.startInstant.nanosecondsSinceEpoch < $1.startInstant.nanosecondsSinceEpoch }
            #expect(spans.count == 2)
            let vias = spans.map { observed.hops(of: $0).compactMap { Self.string($0, "asyncurlsession.via") } }
            #expect(vias == [["network"], ["cache"]])
            // The cache's answer is no request: an internal span, not a client one.
            #expect(spans.map { observed.hops(of: $0).map(\.kind) } == [[.client], [.internal]])
            #expect(spans.allSatisfy { Self.int($0, "http.response.status_code") == 200 })
            let hits = try observed.metrics.expectCounter(
                "asyncurlsession.cache.hits",
                [("http.request.method", "GET"), ("url.scheme", "http"), ("unit", "{response}"),
                 ("description", "Responses taken from the response cache.")])
            #expect(hits.totalValue == 1)
            #expect(observed.requests(Self.getHTTP.merging(["http.response.status_code": "200"]) { $1 }) == 1)
        }
    }

    // MARK: - Trace headers

    @Test func traceHeaders_goOutWithTheRequest_naming_itsClientSpan() async throws {
        let observed = Observed()
        try await withServer { server in
            let (data, _) = try await Session(configuration: observed.configuration()).data(from: server.url("/echo"))
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            let span = try observed.clientSpan()
            #expect(span.parentSpanID == (try observed.taskSpan()).spanID)
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
            let hops = observed.hops(of: try observed.taskSpan())
            try #require(hops.count == 2)
            // The second request's own span, not the first's.
            #expect(echo.value(of: InMemoryTracer.spanIDKey) == hops[1].spanID)
            #expect(hops[0].spanID != hops[1].spanID)
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
                let task = try observed.taskSpan()
                let span = try #require(observed.hops(of: task).last)
                #expect(echo.value(of: InMemoryTracer.spanIDKey) == (allowed ? span.spanID : nil), "allowed: \(allowed)")
                #expect(echo.value(of: InMemoryTracer.traceIDKey) == (allowed ? task.traceID : nil))
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
            for span in [try observed.taskSpan(), try observed.clientSpan()] {
                #expect(
                    Self.string(span, "url.full")
                        == "http://127.0.0.1:\(server.port)/echo?token=REDACTED&page=2&Signature=REDACTED")
            }
        }
    }

    @Test func nonstandardMethod_isNamedHTTP_withTheOriginalKept() async throws {
        let observed = Observed()
        try await withServer { server in
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "PURGE"
            _ = try await Session(configuration: observed.configuration()).data(for: request)
            for span in [try observed.taskSpan(), try observed.clientSpan()] {
                #expect(span.operationName == "HTTP")
                #expect(Self.string(span, "http.request.method") == "_OTHER")
                #expect(Self.string(span, "http.request.method_original") == "PURGE")
            }
            #expect(observed.requests(["http.request.method": "_OTHER", "url.scheme": "http"]) == 1)
        }
    }

    @Test func metricsPrefix_namesTheLibrarysOwn_andTheHostDimension_isTheConfigurations() async throws {
        let metrics = TestMetrics()
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.metricsFactory = metrics
            configuration.metricsPrefix = "myapp.http"
            configuration.metricsIncludeHost = true
            _ = try await Session(configuration: configuration).data(from: server.url("/bytes/10"))
            let host = ["server.address": "127.0.0.1", "server.port": String(server.port)]
            let dimensions = Self.getHTTP.merging(host) { $1 }
            let requests = metrics.timers.filter { $0.label == "http.client.request.duration" }
            #expect(requests.count == 1)
            #expect(requests.allSatisfy { timer in
                let found = Dictionary(timer.dimensions, uniquingKeysWith: { first, _ in first })
                return dimensions.allSatisfy { found[$0.key] == $0.value }
            })
            let received = metrics.recorders.filter { $0.label == "http.client.response.body.size" }
            #expect(received.flatMap(\.values) == [10])
            #expect(received.allSatisfy { $0.dimensions.contains { $0 == ("server.address", "127.0.0.1") } })
            // The conventions' names are fixed; the prefix names the rest.
            let labels = metrics.timers.map(\.label) + metrics.meters.map(\.label) + metrics.recorders.map(\.label)
                + metrics.counters.map(\.label)
            #expect(labels.allSatisfy { $0.hasPrefix("http.client.") || $0.hasPrefix("myapp.http.") }, "\(labels)")
            #expect(labels.contains("myapp.http.requests.waiting_for_connection"))
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
            #expect(spans.map(\.kind) == [.client, .internal])
            #expect(echo.value(of: InMemoryTracer.spanIDKey) == spans.first?.spanID)
            let requests = metrics.timers.filter { $0.label == "http.client.request.duration" }
            #expect(requests.flatMap(\.values).count == 1)
            #expect(requests.first?.dimensions.contains { $0 == ("http.response.status_code", "200") } == true)
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
