import AsyncURLSession
import AsyncURLSessionOpenAPI
import Foundation
import HTTPTypes
import InMemoryTracing
import LoopbackServer
import OpenAPIRuntime
import Testing
import TestSupport
import Tracing

/// The OpenAPI transport against the loopback server, called as a
/// generated client calls it: `send(_:body:baseURL:operationID:)`.
@Suite struct AsyncURLSessionTransportTests {
    private func transport(_ server: LoopbackServer) -> AsyncURLSessionTransport {
        var configuration = SessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = scaledTimeout(20)
        return AsyncURLSessionTransport(configuration: .init(session: Session(configuration: configuration)))
    }

    /// A bodiless request for `path`, as a generated client sends it.
    private func send(
        _ path: String, method: HTTPRequest.Method = .get, to base: URL, with transport: AsyncURLSessionTransport
    ) async throws -> (HTTPResponse, HTTPBody?) {
        try await transport.send(
            HTTPRequest(method: method, scheme: nil, authority: nil, path: path), body: nil, baseURL: base,
            operationID: "op")
    }

    /// The session's retry policy and middleware apply to the transport's
    /// requests as to any task's (issue 54).
    @Test func retryPolicyAndMiddleware_applyToTheTransportsRequests() async throws {
        struct Signer: RequestMiddleware {
            func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
                var request = request
                request.setValue("openapi-signed", forHTTPHeaderField: "X-Signature")
                return .send(request)
            }
        }
        try await withServer { server in
            var configuration = SessionConfiguration.ephemeral
            configuration.retryPolicy = RetryPolicy(initialBackoff: 0.01, jitter: 0)
            configuration.middleware = [Signer()]
            let transport = AsyncURLSessionTransport(configuration: .init(session: Session(configuration: configuration)))
            let (response, body) = try await send("/flaky/openapi?fail=1", to: server.baseURL, with: transport)
            #expect(response.status.code == 200)
            let data = try await Data(collecting: try #require(body), upTo: 1 << 20)
            #expect(String(decoding: data, as: UTF8.self) == "ok after 2")
            let (_, echoed) = try await send("/echo", to: server.baseURL, with: transport)
            let echo = try await Data(collecting: try #require(echoed), upTo: 1 << 20)
            #expect(String(decoding: echo, as: UTF8.self).contains("openapi-signed"))
        }
    }

    @Test func get_returnsStatusHeadersAndAStreamedBody() async throws {
        try await withServer { server in
            let (response, body) = try await send("/bytes/300000", to: server.baseURL, with: transport(server))
            #expect(response.status.code == 200)
            #expect(response.headerFields[.contentLength] == "300000")
            let streamed = try #require(body)
            #expect(streamed.length == .known(300_000))
            let data = try await Data(collecting: streamed, upTo: 1 << 20)
            #expect(data == LoopbackServer.patternBody(count: 300_000))
        }
    }

    /// The transport's requests are session tasks: each is the same task
    /// span (under the generated client's caller's span) with an HTTP client
    /// span per request beneath it.
    @Test func request_isATaskSpanUnderTheCallersSpan_withAClientSpan() async throws {
        try await withServer { server in
            let tracer = InMemoryTracer()
            var configuration = SessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = scaledTimeout(20)
            configuration.tracer = tracer
            let transport = AsyncURLSessionTransport(configuration: .init(session: Session(configuration: configuration)))
            let (parent, data) = try await tracer.withSpan("listPets") { span in
                let (_, body) = try await send("/bytes/100", to: server.baseURL, with: transport)
                return (span.spanID, try await Data(collecting: try #require(body), upTo: 1 << 20))
            }
            #expect(data.count == 100)
            // The task's span ends with its body, read above.
            func tasks() -> [FinishedInMemorySpan] {
                tracer.finishedSpans.filter { $0.kind == .internal && $0.operationName == "GET" }
            }
            try await eventually { !tasks().isEmpty }
            try #require(tasks().count == 1, "\(tracer.finishedSpans.map(\.operationName))")
            let task = tasks()[0]
            #expect(task.parentSpanID == parent)
            let spans = tracer.finishedSpans.filter { $0.kind == .client }
            try #require(spans.count == 1, "\(spans.map(\.operationName))")
            let span = spans[0]
            #expect(span.operationName == "GET")
            #expect(span.parentSpanID == task.spanID)
            for span in [task, span] {
                #expect(span.attributes["http.request.method"]?.toSpanAttribute() == .string("GET"))
                #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(200))
                #expect(span.attributes["url.full"]?.toSpanAttribute() == .string(server.url("/bytes/100").absoluteString))
                #expect(span.status == nil)
            }
        }
    }

    @Test func post_sendsTheRequestBody() async throws {
        try await withServer { server in
            let sent = LoopbackServer.patternBody(count: 200_000)
            var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/echo-body")
            request.headerFields[.contentType] = "application/octet-stream"
            let (response, body) = try await transport(server).send(
                request, body: HTTPBody(sent), baseURL: server.baseURL, operationID: "echo")
            #expect(response.status.code == 200)
            let received = try await Data(collecting: try #require(body), upTo: 1 << 20)
            #expect(received == sent)
        }
    }

    @Test func inMemoryBody_isSentAgainAfterA307() async throws {
        try await withServer { server in
            let sent = LoopbackServer.patternBody(count: 1 << 20)
            let request = HTTPRequest(
                method: .post, scheme: nil, authority: nil, path: "/redirect-to?status=307&location=/echo-body")
            let (response, body) = try await transport(server).send(
                request, body: HTTPBody(sent), baseURL: server.baseURL, operationID: "echo")
            #expect(response.status.code == 200)
            let received = try await Data(collecting: try #require(body), upTo: 2 << 20)
            #expect(received == sent)
        }
    }

    @Test func liveStreamOfUnknownLength_isSentChunked() async throws {
        try await withServer { server in
            let piece = LoopbackServer.patternBody(count: 64 << 10)
            let stream = AsyncStream<ArraySlice<UInt8>> { continuation in
                for _ in 0..<4 { continuation.yield(ArraySlice(piece)) }
                continuation.finish()
            }
            let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/echo")
            let (response, body) = try await transport(server).send(
                request, body: HTTPBody(stream, length: .unknown, iterationBehavior: .single),
                baseURL: server.baseURL, operationID: "echo")
            #expect(response.status.code == 200)
            let json = try await String(collecting: try #require(body), upTo: 1 << 16)
            #expect(json.contains(#""bodyLength":262144"#))
            #expect(json.lowercased().contains(#"["transfer-encoding","chunked"]"#))
        }
    }

    @Test func baseURLWithAPath_andAQuery_areJoined() async throws {
        try await withServer { server in
            let base = server.url("/status")
            let (response, _) = try await send("/418?x=1", to: base, with: transport(server))
            #expect(response.status.code == 418)
        }
    }

    @Test func redirects_areFollowed() async throws {
        try await withServer { server in
            let (response, body) = try await send("/redirect/2", to: server.baseURL, with: transport(server))
            #expect(response.status.code == 200)
            #expect(try await String(collecting: try #require(body), upTo: 1024) == "done")
        }
    }

    @Test func headRequest_hasNoBody() async throws {
        try await withServer { server in
            let (response, body) = try await send("/bytes/10", method: .head, to: server.baseURL, with: transport(server))
            #expect(response.status.code == 200)
            #expect(body == nil)
        }
    }

    @Test func connectionRefused_throwsTheURLError() async throws {
        // A port held bound but not listening: a server shut down first
        // freed its port for any other test's server to take (CI saw one).
        let server = try await LoopbackServer.start()
        try await server.shutdown()
        let reservation = try PortReservation()
        defer { reservation.release() }
        let base = try #require(URL(string: "http://127.0.0.1:\(reservation.port)"))
        do {
            _ = try await send("/bytes/1", to: base, with: transport(server))
            Issue.record("a refused connection gave a response")
        } catch {
            #expect((error as? URLError)?.code == .cannotConnectToHost)
        }
    }

    @Test func bodyNotRead_isCancelledWhenDropped_andTheSessionGoesOn() async throws {
        try await withServer { server in
            let transport = transport(server)
            do {
                let (_, body) = try await send("/bytes/67108864", to: server.baseURL, with: transport)
                var iterator = try #require(body).makeAsyncIterator()
                _ = try await iterator.next()
            }
            let (response, _) = try await send("/bytes/10", to: server.baseURL, with: transport)
            #expect(response.status.code == 200)
        }
    }
}

extension AsyncURLSessionTransportTests {
    @Test func bodyNeverIterated_cancelsTheTransferWhenDropped() async throws {
        try await withServer { server in
            var configuration = SessionConfiguration.ephemeral
            configuration.httpMaximumConnectionsPerHost = 1
            let transport = AsyncURLSessionTransport(configuration: .init(session: Session(configuration: configuration)))
            for _ in 0..<3 {
                // Each response's 64 MiB body is dropped unread; with one
                // connection per host, the next request gets it only if the
                // dropped one was ended.
                let (response, _) = try await send("/bytes/67108864", to: server.baseURL, with: transport)
                #expect(response.status.code == 200)
            }
        }
    }
}
