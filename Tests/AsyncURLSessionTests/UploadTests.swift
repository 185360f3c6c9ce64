import AsyncURLSession
import Crypto
import Foundation
import LoopbackServer
import Testing

@Suite struct UploadTests {
    private func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    private func temporaryFile(_ data: Data) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString)")
        try data.write(to: url)
        return url
    }

    @Test func uploadFromData_arrivesIntact_withProgressTotals() async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 3_000_000)
            let task = Session(configuration: testConfiguration())
                .uploadTask(with: URLRequest(url: server.url("/echo")), from: body)
            #expect(task.kind == .upload)
            let progress = task.progress
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            let echo = try JSONDecoder().decode(Echo.self, from: recorded.body)
            #expect(echo.method == "POST")
            #expect(echo.bodyLength == body.count)
            #expect(echo.bodySHA256 == sha256(body))
            #expect(recorded.kinds.first == "uploadProgress")
            let totals = recorded.uploadProgress.map(\.totalBytes)
            #expect(totals == totals.sorted(), "totals are monotonic")
            #expect(totals.last == Int64(body.count))
            #expect(recorded.uploadProgress.allSatisfy { $0.totalBytesExpected == Int64(body.count) })
            #expect(recorded.uploadProgress.reduce(0) { $0 + $1.bytes } == Int64(body.count))
            #expect(task.countOfBytesSent == Int64(body.count))
            #expect(task.countOfBytesExpectedToSend == Int64(body.count))
            #expect(progress.completedUnitCount == Int64(body.count))
            #expect(progress.totalUnitCount == Int64(body.count))
        }
    }

    @Test func uploadFromFile_arrivesIntact() async throws {
        try await withServer(timeLimit: 60) { server in
            let body = LoopbackServer.patternBody(count: 64 << 20)
            let file = try temporaryFile(body)
            defer { try? FileManager.default.removeItem(at: file) }
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "PUT"
            let (data, _) = try await Session(configuration: testConfiguration()).upload(for: request, fromFile: file)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.method == "PUT")
            #expect(echo.bodyLength == body.count)
            #expect(echo.bodySHA256 == sha256(body))
        }
    }

    @Test func missingUploadFile_failsBeforeAnythingIsSent() async throws {
        try await withServer { server in
            let missing = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)")
            await #expect(throws: URLError.self) {
                do {
                    _ = try await Session(configuration: testConfiguration())
                        .upload(for: URLRequest(url: server.url("/echo")), fromFile: missing)
                } catch {
                    #expect(error.urlErrorCode == .fileDoesNotExist)
                    throw error
                }
            }
            #expect(server.acceptedConnections == 0)
        }
    }

    @Test func directoryAsUploadFile_failsClearly() async throws {
        try await withServer { server in
            await #expect(throws: URLError.self) {
                _ = try await Session(configuration: testConfiguration())
                    .upload(for: URLRequest(url: server.url("/echo")), fromFile: FileManager.default.temporaryDirectory)
            }
            #expect(server.acceptedConnections == 0)
        }
    }

    @Test func streamedUpload_fromAsyncSequence_isSentChunked() async throws {
        try await withServer { server in
            let chunks = (0..<20).map { LoopbackServer.patternBody(count: 50_000, offset: $0 * 50_000) }
            let whole = chunks.reduce(Data(), +)
            let task = Session(configuration: testConfiguration())
                .uploadTask(withStreamedRequest: URLRequest(url: server.url("/echo")))
            task.resume()
            var body = Data()
            var expectations: [Int64] = []
            for try await event in task.events {
                switch event {
                case .needBodyStream(let decision):
                    let stream = asyncChunks(chunks)
                    decision.provide(stream)
                case .uploadProgress(let progress): expectations.append(progress.totalBytesExpected)
                case .data(let chunk): body.append(chunk)
                default: break
                }
            }
            let echo = try JSONDecoder().decode(Echo.self, from: body)
            #expect(echo.bodyLength == whole.count)
            #expect(echo.bodySHA256 == sha256(whole))
            #expect(echo.value(of: "transfer-encoding") == "chunked")
            #expect(expectations.allSatisfy { $0 == -1 }, "a stream without Content-Length has no expected size")
        }
    }

    @Test func streamedUpload_fromInputStream_withContentLength() async throws {
        final class Provider: SessionTaskDelegate {
            let body: Data
            init(body: Data) { self.body = body }
            func task(_ task: SessionTask, needsBodyStream decision: BodyStreamDecision) async {
                decision.provide(InputStream(data: body))
            }
        }
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 700_000)
            var request = URLRequest(url: server.url("/echo"))
            request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
            let task = Session(configuration: testConfiguration())
                .uploadTask(withStreamedRequest: request, delegate: Provider(body: body))
            task.resume()
            let recorded = await record(task)
            let echo = try JSONDecoder().decode(Echo.self, from: recorded.body)
            #expect(echo.bodyLength == body.count)
            #expect(echo.bodySHA256 == sha256(body))
            #expect(echo.value(of: "transfer-encoding") == nil)
        }
    }

    /// The server answered before the body stream ended (its Content-Length
    /// was all sent) while the delegate was still deciding on the response:
    /// the body bytes were held, came out inside libcurl's unpause once the
    /// delegate allowed them, and there the response's end stopped the
    /// transfer, which libcurl then never reports done. The task hung until
    /// the request's idle timeout (20 s in a full test run, where the
    /// delegate's answer is often late).
    @Test func responseAllowedLate_whileTheBodyStreamIsOpen_endsTheTaskAtOnce() async throws {
        final class LateAllower: SessionTaskDelegate {
            let chunks: AsyncStream<Data>
            init(chunks: AsyncStream<Data>) { self.chunks = chunks }
            func task(_ task: SessionTask, needsBodyStream decision: BodyStreamDecision) async {
                decision.provide(chunks)
            }
            func task(_ task: SessionTask, didReceive response: HTTPURLResponse, decision: ResponseDecision) async {
                // Long enough for the whole small body to arrive and be held.
                try? await Task.sleep(for: .milliseconds(300))
                decision.allow()
            }
        }
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 10_000)
            let (chunks, producer) = AsyncStream<Data>.makeStream()
            producer.yield(body)  // and no end: the stream stays open
            defer { producer.finish() }
            var request = URLRequest(url: server.url("/echo"))
            request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
            var configuration = testConfiguration()
            configuration.timeoutIntervalForRequest = 120
            let task = Session(configuration: configuration)
                .uploadTask(withStreamedRequest: request, delegate: LateAllower(chunks: chunks))
            task.resume()
            let recorded = try await withTimeLimit(30) { await record(task) }
            #expect(recorded.error == nil, "\(String(describing: recorded.error))")
            let echo = try JSONDecoder().decode(Echo.self, from: recorded.body)
            #expect(echo.bodyLength == body.count)
        }
    }

    @Test func streamedUpload_isAskedAgainFor307Redirect() async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 10_000)
            let task = Session(configuration: testConfiguration())
                .uploadTask(withStreamedRequest: URLRequest(url: server.url("/redirect-to?status=307&location=/echo")))
            task.resume()
            var asked = 0
            var responseBody = Data()
            for try await event in task.events {
                switch event {
                case .needBodyStream(let decision):
                    asked += 1
                    decision.provide(InputStream(data: body))
                case .data(let chunk): responseBody.append(chunk)
                default: break
                }
            }
            #expect(asked == 2)
            let echo = try JSONDecoder().decode(Echo.self, from: responseBody)
            #expect(echo.method == "POST")
            #expect(echo.bodyLength == body.count)
        }
    }

    @Test func unansweredBodyStream_failsWithRequestBodyStreamExhausted() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration())
                .uploadTask(withStreamedRequest: URLRequest(url: server.url("/echo")))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.kinds.first == "needBodyStream")
            #expect(recorded.error?.urlErrorCode == .requestBodyStreamExhausted)
            #expect(server.acceptedConnections == 0)
        }
    }

    @Test func dataTaskWithHTTPBodyStream_sendsIt() async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 123_456)
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "POST"
            request.httpBodyStream = InputStream(data: body)
            let (data, _) = try await Session(configuration: testConfiguration()).data(for: request)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.bodyLength == body.count)
            #expect(echo.bodySHA256 == sha256(body))
        }
    }

    @Test func noBody_expectsZeroToSend() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/1"))
            task.resume()
            _ = await record(task)
            #expect(task.countOfBytesExpectedToSend == 0)
            #expect(task.countOfBytesSent == 0)
        }
    }
}
