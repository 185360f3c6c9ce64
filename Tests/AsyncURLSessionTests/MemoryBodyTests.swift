import AsyncURLSession
import Crypto
import CurlEngine
import Foundation
import LoopbackServer
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Bodies that are `Data` in memory go to libcurl as CURLOPT_POSTFIELDS,
/// read where they are: every way a request is sent again must still send
/// the whole body, with the method asked for.
@Suite struct MemoryBodyTests {
    private func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    private func echo(_ data: Data) throws -> Echo {
        try JSONDecoder().decode(Echo.self, from: data)
    }

    /// One connection, so consecutive requests run on recycled handles.
    private func oneConnectionSession() -> Session {
        var configuration = testConfiguration()
        configuration.httpMaximumConnectionsPerHost = 1
        return Session(configuration: configuration)
    }

    @Test func largeBody_arrivesWhole_andNeverPassesThroughTheReadCallback() async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: (1 << 20) + 17)
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "POST"
            request.httpBody = body
            let (data, _) = try await Session(configuration: testConfiguration()).data(for: request)
            let echo = try echo(data)
            #expect(echo.bodyLength == body.count)
            #expect(echo.bodySHA256 == sha256(body))
            #expect(MemoryBodyReadCallbackCount.bytesCopied == 0)
        }
    }

    /// Sizes: copied (under 1 KiB), borrowed and sent with the head (under
    /// 64 KiB), borrowed and sent after it.
    @Test(arguments: ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"], [10, 5_000, 300_000])
    func methodOnTheWire_isTheOneAskedFor(method: String, size: Int) async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: size)
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = method
            request.httpBody = body
            let (data, _) = try await Session(configuration: testConfiguration()).data(for: request)
            let echo = try echo(data)
            #expect(echo.method == method)
            #expect(echo.bodyLength == size)
            #expect(echo.bodySHA256 == sha256(body))
            #expect(echo.value(of: "content-length") == "\(size)")
            #expect(echo.value(of: "transfer-encoding") == nil)
        }
    }

    /// A GET and a HEAD on the handle a body from memory used: no body, no
    /// length, their own method.
    @Test func getAndHeadAfterAnUpload_onTheSameHandle_areUntouched() async throws {
        try await withServer { server in
            let session = oneConnectionSession()
            var post = URLRequest(url: server.url("/echo"))
            post.httpMethod = "POST"
            post.httpBody = LoopbackServer.patternBody(count: 300_000)
            _ = try await session.data(for: post)

            let (data, _) = try await session.data(for: URLRequest(url: server.url("/echo")))
            let echo = try echo(data)
            #expect(echo.method == "GET")
            #expect(echo.bodyLength == 0)
            #expect(echo.value(of: "content-length") == nil)

            var head = URLRequest(url: server.url("/echo"))
            head.httpMethod = "HEAD"
            let (headData, response) = try await session.data(for: head)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(headData.isEmpty)
        }
    }

    /// Bodies from memory and from a file alternate on one handle: each
    /// request sends its own body (a handle set up for one kind never
    /// serves the other, and no pointer of an earlier body stays on it).
    @Test func memoryAndFileBodies_alternatingOnOneHandle_eachSendTheirOwn() async throws {
        try await withServer { server in
            let session = oneConnectionSession()
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("memory-body-\(UUID().uuidString)")
            let fileBody = LoopbackServer.patternBody(count: 200_000, offset: 7)
            try fileBody.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "POST"
            for round in 0..<3 {
                let memoryBody = LoopbackServer.patternBody(count: 150_000 + round, offset: round)
                let (fromMemory, _) = try await session.upload(for: request, from: memoryBody)
                #expect(try echo(fromMemory).bodySHA256 == sha256(memoryBody))
                let (fromFile, _) = try await session.upload(for: request, fromFile: file)
                #expect(try echo(fromFile).bodySHA256 == sha256(fileBody))
            }
        }
    }

    @Test func emptyBody_sendsALengthOfZero_andNoBodyStillSendsNone() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "POST"
            request.httpBody = Data()
            let empty = try echo(try await session.data(for: request).0)
            #expect(empty.method == "POST")
            #expect(empty.bodyLength == 0)
            #expect(empty.value(of: "content-length") == "0")
            #expect(empty.value(of: "content-type") == nil)

            request.httpBody = nil
            let none = try echo(try await session.data(for: request).0)
            #expect(none.method == "POST")
            #expect(none.bodyLength == 0)
            #expect(none.value(of: "content-type") == nil)
        }
    }

    @Test(arguments: [(307, "POST"), (308, "PUT")])
    func redirect_sendsTheWholeBodyAgain(status: Int, method: String) async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 1 << 20)
            var request = URLRequest(url: server.url("/redirect-to?status=\(status)&location=/echo"))
            request.httpMethod = method
            request.httpBody = body
            let task = Session(configuration: testConfiguration()).dataTask(with: request)
            task.resume()
            let recorded = await record(task)
            #expect(recorded.redirects == [status])
            let echo = try echo(recorded.body)
            #expect(echo.method == method)
            #expect(echo.bodyLength == body.count)
            #expect(echo.bodySHA256 == sha256(body))
        }
    }

    /// Digest is run by libcurl inside one transfer: it asks with an empty
    /// body, then sends the whole body with its answer. The server answers
    /// only once the declared length has arrived.
    @Test func digestChallenge_sendsTheWholeBodyWithTheAnswer_andProgressEndsAtItsSize() async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 1 << 20)
            var request = URLRequest(url: server.url("/auth/digest?user=ann&password=pw"))
            request.httpMethod = "PUT"
            request.httpBody = body
            let task = Session(configuration: testConfiguration()).dataTask(with: request)
            task.resume()
            var status = 0
            var progress: [TransferProgress] = []
            for try await event in task.events {
                switch event {
                case .challenge(let decision):
                    decision.useCredential(URLCredential(user: "ann", password: "pw", persistence: .none))
                case .response(let response, _): status = response.statusCode
                case .uploadProgress(let sent): progress.append(sent)
                default: break
                }
            }
            #expect(status == 200)
            #expect(progress.last?.totalBytes == Int64(body.count))
            #expect(progress.allSatisfy { $0.totalBytesExpected == Int64(body.count) })
            #expect(task.countOfBytesSent == Int64(body.count))
        }
    }

    /// Basic is answered with a new transfer carrying the credential.
    @Test func basicChallenge_sendsTheBodyAgainWithTheCredential() async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 300_000)
            var request = URLRequest(url: server.url("/auth/basic?user=ann&password=pw"))
            request.httpMethod = "POST"
            request.httpBody = body
            let task = Session(configuration: testConfiguration()).dataTask(with: request)
            task.resume()
            var status = 0
            var responseBody = Data()
            for try await event in task.events {
                switch event {
                case .challenge(let decision):
                    decision.useCredential(URLCredential(user: "ann", password: "pw", persistence: .none))
                case .response(let response, _): status = response.statusCode
                case .data(let chunk): responseBody.append(chunk)
                default: break
                }
            }
            #expect(status == 200)
            #expect(String(decoding: responseBody, as: UTF8.self) == "authenticated as ann")
            #expect(server.authorizationAttempts == 1)
            #expect(task.countOfBytesSent == Int64(body.count))
        }
    }

    @Test func retryPolicy_sendsTheWholeBodyAgain() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.retryPolicy = RetryPolicy(initialBackoff: 0.01, jitter: 0)
            var request = URLRequest(url: server.url("/flaky/memory-put?fail=1"))
            request.httpMethod = "PUT"
            request.httpBody = LoopbackServer.patternBody(count: 1 << 20)
            let (data, response) = try await Session(configuration: configuration).data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "ok after 2")
            #expect(server.flakyRequests("memory-put") == 2)
        }
    }

    @Test func middlewareRetry_sendsTheWholeBodyAgain() async throws {
        final class RetryOnce: RequestMiddleware, Sendable {
            let attempts = Mutex(0)
            func inspect(_ response: HTTPURLResponse, request: URLRequest, attempt: MiddlewareAttempt) async throws
                -> MiddlewareResponseStep
            {
                let count = attempts.withLock { attempts in
                    attempts += 1
                    return attempts
                }
                return count == 1 ? .retry(request) : .accept
            }
        }
        try await withServer { server in
            let middleware = RetryOnce()
            var configuration = testConfiguration()
            configuration.middleware = [middleware]
            let body = LoopbackServer.patternBody(count: 1 << 20)
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "POST"
            request.httpBody = body
            let (data, _) = try await Session(configuration: configuration).data(for: request)
            let echo = try echo(data)
            #expect(middleware.attempts.withLock { $0 } == 2)
            #expect(echo.bodyLength == body.count)
            #expect(echo.bodySHA256 == sha256(body))
        }
    }

    /// A body small enough to go out with the request head still reports
    /// its progress, up to its size.
    @Test func smallBody_reportsUploadProgressUpToItsSize() async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 5_000)
            let task = Session(configuration: testConfiguration())
                .uploadTask(with: URLRequest(url: server.url("/echo")), from: body)
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.kinds.first == "uploadProgress")
            #expect(recorded.uploadProgress.last?.totalBytes == Int64(body.count))
            #expect(recorded.uploadProgress.allSatisfy { $0.totalBytesExpected == Int64(body.count) })
            #expect(task.countOfBytesSent == Int64(body.count))
        }
    }

    /// Asked for by the caller (URLSession never adds it): the header goes
    /// out, and the body after the server's 100.
    @Test func expect100Continue_askedForByTheCaller_sendsTheBodyAfterThe100() async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 1 << 20)
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "PUT"
            request.setValue("100-continue", forHTTPHeaderField: "Expect")
            request.httpBody = body
            let task = Session(configuration: testConfiguration()).dataTask(with: request)
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            let echo = try echo(recorded.body)
            #expect(echo.value(of: "expect") == "100-continue")
            #expect(echo.bodySHA256 == sha256(body))
        }
    }

    @Test func overHTTP2_theBodyArrivesWhole() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let body = LoopbackServer.patternBody(count: 1 << 20)
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "PUT"
            request.httpBody = body
            let task = Session(configuration: testConfiguration(trusting: server)).dataTask(with: request)
            task.resume()
            let recorded = await record(task)
            #expect(recorded.metrics?.transactionMetrics.last?.networkProtocolName == "h2")
            let echo = try echo(recorded.body)
            #expect(echo.method == "PUT")
            #expect(echo.bodySHA256 == sha256(body))
        }
    }
}
