import AsyncURLSession
import AsyncURLSessionTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// What a user's test does with `StubTransport`: script answers, inspect
/// what was sent, and get a clear failure for a request nobody scripted.
@Suite struct StubTransportTests {
    private func session(_ stubs: StubTransport, _ adjust: (inout SessionConfiguration) -> Void = { _ in }) -> Session {
        var configuration = testConfiguration()
        configuration.localTransport = stubs
        adjust(&configuration)
        return Session(configuration: configuration)
    }

    private struct User: Codable, Equatable {
        var name: String
    }

    @Test func jsonStub_isDecodedByTheCallersCode() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            try stubs.stub(.url("https://api.example.com/user"), with: .json(User(name: "Ada")))
            let (data, response) = try await session(stubs).data(from: URL(string: "https://api.example.com/user")!)
            #expect(try JSONDecoder().decode(User.self, from: data) == User(name: "Ada"))
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == 200)
            #expect(http.value(forHTTPHeaderField: "Content-Type") == "application/json")
            #expect(stubs.requests.map(\.description) == ["GET https://api.example.com/user"])
        }
    }

    @Test func naturalSpellings_compileAndAnswer_anyWithoutParentheses_andARedirectToAURL() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.any, with: .text("fallback"))
            stubs.stub(.path("/old"), with: .redirect(to: URL(string: "https://api.example.com/new")!))
            stubs.stub(.path("/new"), with: .text("moved here"))
            let session = session(stubs)
            let (moved, response) = try await session.data(from: URL(string: "https://api.example.com/old")!)
            #expect(String(decoding: moved, as: UTF8.self) == "moved here")
            #expect(response.url?.absoluteString == "https://api.example.com/new")
            let (other, _) = try await session.data(from: URL(string: "https://elsewhere.example/x")!)
            #expect(String(decoding: other, as: UTF8.self) == "fallback")
        }
    }

    @Test func unmatchedRequest_failsWithAnErrorThatNamesItAndTheStubs() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.path("/known", method: "GET"), with: .text("ok"))
            stubs.stub(.prefix("https://other.example/"), times: 2, with: .status(204))
            do {
                _ = try await session(stubs).data(from: URL(string: "https://api.example.com/unknown?x=1")!)
                Issue.record("an unmatched request succeeded")
            } catch let error as URLError {
                #expect(error.code == .unsupportedURL)
                let text = error.localizedDescription
                #expect(text.contains("GET https://api.example.com/unknown?x=1"))
                #expect(text.contains("https://other.example/* (2 left)"))
                #expect(text.contains("GET */known"))
                #expect(error.failingURL?.absoluteString == "https://api.example.com/unknown?x=1")
            }
            #expect(stubs.unmatchedRequests.map(\.description) == ["GET https://api.example.com/unknown?x=1"])
            #expect(stubs.requests.isEmpty)
        }
    }

    @Test func unmatchedRequest_withNetworkFallback_reachesTheServer() async throws {
        try await withServer { server in
            let stubs = StubTransport(unmatched: .network)
            stubs.stub(.path("/stubbed"), with: .text("from the stub"))
            var configuration = testConfiguration(trusting: server)
            configuration.localTransport = stubs
            let session = Session(configuration: configuration)
            let (stubbed, _) = try await session.data(from: server.url("/stubbed"))
            let (real, _) = try await session.data(from: server.url("/bytes/10"))
            #expect(String(decoding: stubbed, as: UTF8.self) == "from the stub")
            #expect(real == LoopbackServer.patternBody(count: 10))
            #expect(server.acceptedConnections == 1)
        }
    }

    @Test func sequence_answersInOrder_thenRepeatsTheLast() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.any(), sequence: [.status(503), .text("second"), .text("third")])
            let session = session(stubs)
            let url = URL(string: "http://stub.test/flaky")!
            var statuses: [Int] = []
            var bodies: [String] = []
            for _ in 0..<4 {
                let (data, response) = try await session.data(from: url)
                statuses.append((response as? HTTPURLResponse)?.statusCode ?? 0)
                bodies.append(String(decoding: data, as: UTF8.self))
            }
            #expect(statuses == [503, 200, 200, 200])
            #expect(bodies == ["", "second", "third", "third"])
        }
    }

    @Test func limitedStub_givesWayToTheOlderOneAfterItsTimes() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.any(), with: .text("usual"))
            stubs.stub(.any(), times: 1, with: .text("first only"))
            let session = session(stubs)
            let url = URL(string: "http://stub.test/")!
            let first = try await session.data(from: url).0
            let second = try await session.data(from: url).0
            #expect(String(decoding: first, as: UTF8.self) == "first only")
            #expect(String(decoding: second, as: UTF8.self) == "usual")
        }
    }

    @Test func handler_seesTheRequestAsSent_withTheSessionsHeadersAndTheBody() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.url("https://api.example.com/items", method: "PUT")) { request in
                .text("\(request.method) \(request.body.count) \(request.value(forHTTPHeaderField: "X-Trace") ?? "-")")
            }
            let session = session(stubs) { $0.httpAdditionalHeaders = ["X-Trace": "abc", "Authorization": "Bearer t"] }
            var request = URLRequest(url: URL(string: "https://api.example.com/items")!)
            request.httpMethod = "PUT"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            let (data, _) = try await session.upload(for: request, from: Data(#"{"a":1}"#.utf8))
            #expect(String(decoding: data, as: UTF8.self) == "PUT 7 abc")
            let sent = try #require(stubs.requests.first)
            #expect(sent.body == Data(#"{"a":1}"#.utf8))
            #expect(sent.value(forHTTPHeaderField: "Content-Type") == "application/json")
            #expect(sent.value(forHTTPHeaderField: "Authorization") == "Bearer t")
            #expect(sent.value(forHTTPHeaderField: "User-Agent") != nil)
        }
    }

    @Test func streamedUpload_isReadByTheStub_withProgress() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.any(method: "POST")) { request in .text(String(request.body.count)) }
            let session = session(stubs)
            var request = URLRequest(url: URL(string: "http://stub.test/upload")!)
            request.httpMethod = "POST"
            let task = session.uploadTask(withStreamedRequest: request)
            task.resume()
            var body = Data()
            var progress: [Int64] = []
            for try await event in task.events {
                switch event {
                case .needBodyStream(let decision):
                    decision.provide(AsyncStream<Data> { continuation in
                        for index in 0..<5 { continuation.yield(Data(repeating: UInt8(index), count: 1000)) }
                        continuation.finish()
                    })
                case .uploadProgress(let sent): progress.append(sent.totalBytes)
                case .data(let chunk): body.append(chunk)
                default: break
                }
            }
            #expect(String(decoding: body, as: UTF8.self) == "5000")
            #expect(progress.last == 5000)
            #expect(stubs.requests.first?.body.count == 5000)
        }
    }

    @Test func cookiesAStubSets_areSentWithTheNextRequest() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.path("/login"), with: .status(200, headers: ["Set-Cookie": "session=s1; Path=/"]))
            stubs.stub(.path("/me")) { request in .text(request.value(forHTTPHeaderField: "Cookie") ?? "none") }
            let session = session(stubs)
            _ = try await session.data(from: URL(string: "http://stub.test/login")!)
            let (data, _) = try await session.data(from: URL(string: "http://stub.test/me")!)
            #expect(String(decoding: data, as: UTF8.self) == "session=s1")
        }
    }

    @Test func neverAnswering_isCancelledPromptly() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.any(), with: .never)
            let task = session(stubs).dataTask(with: URL(string: "http://stub.test/hang")!)
            task.resume()
            Task {
                try await Task.sleep(for: .milliseconds(100))
                task.cancel()
            }
            let recorded = await record(task)
            #expect(recorded.error?.urlErrorCode == .cancelled)
        }
    }

    @Test func loopThatBreaksEarly_onAnEndlessStub_endsTheTask_andTheSessionGoesOn() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.path("/stream"), with: .endless(Data(count: 1000), every: .milliseconds(1)))
            stubs.stub(.path("/after"), with: .text("after"))
            let session = session(stubs)
            let task = session.dataTask(with: URL(string: "http://stub.test/stream")!)
            task.resume()
            for try await event in task.events {
                if case .data = event { break }
            }
            while task.state != .completed { try await Task.sleep(for: .milliseconds(10)) }
            let (data, _) = try await session.data(from: URL(string: "http://stub.test/after")!)
            #expect(String(decoding: data, as: UTF8.self) == "after")
        }
    }

    @Test func delayedResponse_arrivesAfterTheDelay() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.any(), with: StubResponse.text("late").delayed(by: .milliseconds(200)))
            let started = ContinuousClock.now
            let (data, _) = try await session(stubs).data(from: URL(string: "http://stub.test/slow")!)
            #expect(String(decoding: data, as: UTF8.self) == "late")
            #expect(ContinuousClock.now - started >= .milliseconds(200))
        }
    }

    @Test func failureBeforeTheHead_isTheTasksError() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.host("offline.example"), with: .failure(.notConnectedToInternet))
            do {
                _ = try await session(stubs).data(from: URL(string: "https://offline.example/a")!)
                Issue.record("the stubbed failure did not fail the task")
            } catch {
                #expect((error as? URLError)?.code == .notConnectedToInternet)
                #expect((error as? URLError)?.failingURL?.absoluteString == "https://offline.example/a")
            }
        }
    }

    @Test func failedDownload_resumesWithARangeRequestTheStubAnswers() async throws {
        try await withTimeLimit {
            let body = LoopbackServer.patternBody(count: 10_000)
            let stubs = StubTransport()
            let validators = ["ETag": "\"v1\"", "Accept-Ranges": "bytes"]
            stubs.stub(.path("/file")) { request in
                guard let range = request.value(forHTTPHeaderField: "Range") else {
                    return .failure(afterSending: body.prefix(4000), declaredLength: 10_000, headers: validators)
                }
                #expect(range == "bytes=4000-")
                #expect(request.value(forHTTPHeaderField: "If-Range") == "\"v1\"")
                return .status(
                    206, headers: validators.merging(["Content-Range": "bytes 4000-9999/10000"]) { $1 },
                    body: body.suffix(from: 4000))
            }
            let session = session(stubs)
            let first = session.downloadTask(with: URL(string: "http://stub.test/file")!)
            first.resume()
            let failed = await record(first)
            let resumeData = try #require((failed.error as? URLError)?.downloadTaskResumeData)
            let second = session.downloadTask(withResumeData: resumeData)
            second.resume()
            let resumed = await record(second)
            #expect(resumed.error == nil)
            #expect(resumed.resumedAt?.0 == 4000)
            #expect(resumed.downloadedFileSize == 10_000)
            #expect(resumed.downloadedFileMatchesPattern == true)
        }
    }

    @Test func sessionsWithTransportsOfTheirOwn_neverSeeEachOthersStubs() async throws {
        try await withTimeLimit {
            let url = URL(string: "http://stub.test/who")!
            let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let stubs = StubTransport()
                        stubs.stub(.url(url), with: .text("session \(index)"))
                        let (data, _) = try await session(stubs).data(from: url)
                        return (index, String(decoding: data, as: UTF8.self))
                    }
                }
                var answers: [Int: String] = [:]
                for try await (index, text) in group { answers[index] = text }
                return answers
            }
            for index in 0..<8 { #expect(answers[index] == "session \(index)") }
        }
    }

    @Test func informationalResponse_comesBeforeTheFinalOne() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.any()) { _ in .text("final") }
            // A responder of one's own: the seam itself is public.
            var configuration = testConfiguration()
            configuration.localTransport = EarlyHintsTransport()
            let task = Session(configuration: configuration).dataTask(with: URL(string: "http://stub.test/")!)
            task.resume()
            let recorded = await record(task)
            #expect(recorded.kinds == ["informational 103", "response", "data", "metrics"])
            #expect(String(decoding: recorded.body, as: UTF8.self) == "final")
        }
    }
}

/// A `LocalTransport` written against the core's seam directly: a 103, then a 200.
private struct EarlyHintsTransport: LocalTransport {
    struct Responder: LocalResponder {
        func respond(to request: LocalRequest, through writer: LocalResponseWriter) async throws(URLError) {
            try await writer.writeHead(statusCode: 103, headerFields: [(name: "Link", value: "</a.css>; rel=preload")])
            try await writer.writeHead(statusCode: 200, headerFields: [(name: "Content-Length", value: "5")])
            try await writer.writeBody(Data("final".utf8))
        }
    }

    func responder(for request: LocalRequest) -> (any LocalResponder)? { Responder() }
}
