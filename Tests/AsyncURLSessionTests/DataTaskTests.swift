import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

@Suite struct DataTaskTests {
    @Test func events_arriveInLifecycleOrder() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/bytes/100000"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.kinds == ["response", "data", "metrics"])
            #expect(task.state == .completed)
        }
    }

    @Test(arguments: [0, 1, 64 * 1024, 16 * 1024 * 1024])
    func body_isDeliveredIntact(size: Int) async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/bytes/\(size)"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.response?.statusCode == 200)
            #expect(recorded.body.count == size)
            #expect(recorded.body == LoopbackServer.patternBody(count: size))
            #expect(task.countOfBytesReceived == Int64(size))
            #expect(task.countOfBytesExpectedToReceive == Int64(size))
        }
    }

    @Test func chunkedBody_isDeliveredIntact() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/chunked/300001?chunk=7000"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.body == LoopbackServer.patternBody(count: 300_001))
            #expect(task.countOfBytesExpectedToReceive == -1)
        }
    }

    @Test func dataFor_returnsWholeBodyAndResponse() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let (data, response) = try await session.data(from: server.url("/bytes/5000"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data == LoopbackServer.patternBody(count: 5000))
        }
    }

    @Test func dataFor_bodyOverCap_failsWithDataLengthExceedsMaximum() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.maximumCollectedBodySize = 10_000
            let session = Session(configuration: configuration)
            await #expect(throws: URLError.self) {
                do {
                    _ = try await session.data(from: server.url("/bytes/100000"))
                } catch {
                    #expect(error.urlErrorCode == .dataLengthExceedsMaximum)
                    throw error
                }
            }
        }
    }

    @Test func bytesFor_yieldsResponseThenEveryByte() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let (bytes, response) = try await session.bytes(from: server.url("/chunked/70000?chunk=1000"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            var body = Data()
            for try await byte in bytes { body.append(byte) }
            #expect(body == LoopbackServer.patternBody(count: 70_000))
        }
    }

    @Test func serverErrorStatus_isAResponseNotAnError() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let (data, response) = try await session.data(from: server.url("/status/503"))
            #expect((response as? HTTPURLResponse)?.statusCode == 503)
            #expect(String(decoding: data, as: UTF8.self) == "status 503")
        }
    }

    @Test func request_honoursMethodHeadersAndBody() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "PUT"
            request.setValue("yes", forHTTPHeaderField: "X-Test")
            let body = LoopbackServer.patternBody(count: 300_000)
            request.httpBody = body
            let (data, _) = try await session.data(for: request)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.method == "PUT")
            #expect(echo.value(of: "x-test") == "yes")
            #expect(echo.bodyLength == body.count)
            #expect(echo.value(of: "expect") == nil, "URLSession never sends Expect: 100-continue")
        }
    }

    @Test func headerLines_carryNameAndValue_andAnEmptyValueStaysEmpty() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            var request = URLRequest(url: server.url("/echo"))
            request.setValue("a value, with: punctuation", forHTTPHeaderField: "X-Long-Header-Name-To-Pass-Fifteen-Bytes")
            request.setValue("", forHTTPHeaderField: "X-Empty")
            let (data, _) = try await session.data(for: request)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.value(of: "x-long-header-name-to-pass-fifteen-bytes") == "a value, with: punctuation")
            #expect(echo.headers.contains { $0.first?.lowercased() == "x-empty" && ($0.count == 1 || $0[1].isEmpty) })
        }
    }

    @Test func additionalHeaders_applyUnlessTheRequestSetsThem() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.httpAdditionalHeaders = ["X-From-Config": "config", "X-Both": "config"]
            let session = Session(configuration: configuration)
            var request = URLRequest(url: server.url("/echo"))
            request.setValue("request", forHTTPHeaderField: "X-Both")
            let (data, _) = try await session.data(for: request)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.value(of: "x-from-config") == "config")
            #expect(echo.value(of: "x-both") == "request")
        }
    }

    @Test func headRequest_hasResponseAndNoBody() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            var request = URLRequest(url: server.url("/bytes/5000"))
            request.httpMethod = "HEAD"
            let (data, response) = try await session.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data.isEmpty)
        }
    }

    @Test func configuration_isCopiedAtCreation() async throws {
        var configuration = testConfiguration()
        configuration.httpAdditionalHeaders = ["X-A": "1"]
        let session = Session(configuration: configuration)
        configuration.httpAdditionalHeaders = ["X-A": "2"]
        #expect(session.configuration.httpAdditionalHeaders == ["X-A": "1"])
    }

    @Test func collectBody_thenResume_collectedDataIsTheWholeBody() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/bytes/300000"))
            #expect(task.collectBody())
            task.resume()
            let (data, response) = try await task.collectedData()
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data == LoopbackServer.patternBody(count: 300_000))
        }
    }

    /// The classic completion handler's path: a callback instead of a
    /// waiting Swift task, called once, also when registered after the end.
    @Test func whenCollectionEnds_callsBackOnce_thenTakeCollectedResultHasTheBody() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/bytes/70000"))
            #expect(task.collectBody())
            task.resume()
            await withCheckedContinuation { continuation in
                task.whenCollectionEnds { continuation.resume() }
            }
            guard case .success(let (data, response)) = task.takeCollectedResult() else {
                Issue.record("expected the body")
                return
            }
            #expect(response.statusCode == 200)
            #expect(data == LoopbackServer.patternBody(count: 70_000))
            // Registered after the end: called at once.
            await withCheckedContinuation { continuation in
                task.whenCollectionEnds { continuation.resume() }
            }
        }
    }

    @Test func takeCollectedResult_ofACancelledTask_isTheCancellation() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/delay/5000"))
            #expect(task.collectBody())
            task.resume()
            task.cancel()
            await withCheckedContinuation { continuation in
                task.whenCollectionEnds { continuation.resume() }
            }
            guard case .failure(let error) = task.takeCollectedResult() else {
                Issue.record("expected the cancellation")
                return
            }
            #expect(error.code == .cancelled)
        }
    }

    @Test func collectBody_afterResume_isRefused_andCollectedDataSaysWhy() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/bytes/10"))
            task.resume()
            #expect(!task.collectBody())
            do {
                _ = try await task.collectedData()
                Issue.record("collectedData() returned without collectBody()")
            } catch {
                #expect(error.urlErrorCode == .resourceUnavailable)
                #expect("\(error)".contains("collectBody()"))
            }
            task.cancel()
        }
    }
}

/// The loopback server's /echo answer.
struct Echo: Decodable {
    var method: String
    var uri: String
    var headers: [[String]]
    /// Fields after a chunked body.
    var trailers: [[String]]
    var bodyLength: Int
    var bodySHA256: String

    func value(of name: String) -> String? {
        headers.first { $0.first?.lowercased() == name }.flatMap { $0.count > 1 ? $0[1] : nil }
    }

    func trailer(_ name: String) -> String? {
        trailers.first { $0.first?.lowercased() == name }.flatMap { $0.count > 1 ? $0[1] : nil }
    }
}
