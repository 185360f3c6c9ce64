import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// A slice of the behaviour tests, run once against the real loopback
/// server and once against a `StubTransport` answering the same routes:
/// the stub transport drives the same task pipeline, so each gives the same
/// events, decisions, bodies, progress and errors.
@Suite struct StubParityTests {
    @Test(arguments: Backend.allCases)
    func get_deliversResponseBodyAndMetrics_inOrder(backend: Backend) async throws {
        try await withBackend(backend) { endpoint in
            let session = Session(configuration: endpoint.configuration)
            let task = session.dataTask(with: endpoint.url("/bytes/100000"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.kinds == ["response", "data", "metrics"])
            #expect(recorded.response?.statusCode == 200)
            #expect(recorded.response?.expectedContentLength == 100_000)
            #expect(recorded.body == LoopbackServer.patternBody(count: 100_000))
            #expect(recorded.metrics?.transactionMetrics.count == 1)
            #expect(recorded.metrics?.transactionMetrics.first?.fetchType == .networkLoad)
        }
    }

    @Test(arguments: Backend.allCases)
    func redirects_areOfferedAndFollowed(backend: Backend) async throws {
        try await withBackend(backend) { endpoint in
            let session = Session(configuration: endpoint.configuration)
            let task = session.dataTask(with: endpoint.url("/redirect/3"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.redirects == [302, 302, 302])
            #expect(recorded.response?.url?.path == "/redirect/0")
            #expect(String(decoding: recorded.body, as: UTF8.self) == "done")
            #expect(recorded.metrics?.transactionMetrics.count == 4)
        }
    }

    @Test(arguments: Backend.allCases)
    func basicChallenge_answeredWithACredential_succeeds(backend: Backend) async throws {
        try await withBackend(backend) { endpoint in
            let session = Session(configuration: endpoint.configuration)
            let task = session.dataTask(with: endpoint.url("/auth/basic?user=ann&password=pw"))
            task.resume()
            var challenges: [String] = []
            var status: Int?
            var body = Data()
            for try await event in task.events {
                switch event {
                case .challenge(let decision):
                    challenges.append(decision.protectionSpace.authenticationMethod)
                    #expect(decision.protectionSpace.realm == "loopback")
                    decision.useCredential(URLCredential(user: "ann", password: "pw", persistence: .none))
                case .response(let response, _): status = response.statusCode
                case .data(let chunk): body.append(chunk)
                default: break
                }
            }
            #expect(challenges == [NSURLAuthenticationMethodHTTPBasic])
            #expect(status == 200)
            #expect(String(decoding: body, as: UTF8.self) == "authenticated as ann")
        }
    }

    @Test(arguments: Backend.allCases)
    func upload_reportsProgress_andTheServerGetsTheBody(backend: Backend) async throws {
        try await withBackend(backend) { endpoint in
            let session = Session(configuration: endpoint.configuration)
            let body = LoopbackServer.patternBody(count: 300_000)
            var request = URLRequest(url: endpoint.url("/echo-body"))
            request.httpMethod = "POST"
            let task = session.uploadTask(with: request, from: body)
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.body == body)
            #expect(recorded.uploadProgress.last?.totalBytes == 300_000)
            #expect(recorded.kinds.first == "uploadProgress")
        }
    }

    @Test(arguments: Backend.allCases)
    func download_writesTheBodyToAFile(backend: Backend) async throws {
        try await withBackend(backend) { endpoint in
            let session = Session(configuration: endpoint.configuration)
            let task = session.downloadTask(with: endpoint.url("/bytes/200000"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.downloadedFileSize == 200_000)
            #expect(recorded.downloadedFileMatchesPattern == true)
            #expect(recorded.kinds.contains("downloadProgress"))
        }
    }

    @Test(arguments: Backend.allCases)
    func connectionLostMidBody_failsAfterTheBytesThatCame(backend: Backend) async throws {
        try await withBackend(backend) { endpoint in
            let session = Session(configuration: endpoint.configuration)
            let task = session.dataTask(with: endpoint.url("/drop/10000?after=4000"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error?.urlErrorCode == .networkConnectionLost)
            #expect(recorded.body == LoopbackServer.patternBody(count: 4000))
        }
    }

    @Test(arguments: Backend.allCases)
    func silentServer_timesOutByTheRequestTimeout(backend: Backend) async throws {
        try await withBackend(backend) { endpoint in
            var configuration = endpoint.configuration
            configuration.timeoutIntervalForRequest = 1
            let session = Session(configuration: configuration)
            let started = ContinuousClock.now
            do {
                _ = try await session.data(from: endpoint.url("/stall-headers"))
                Issue.record("a silent server answered")
            } catch {
                #expect((error as? URLError)?.code == .timedOut)
            }
            // Far below any other limit that could end it (the resource
            // timeout is 7 days), far above the 1 s it takes: a loaded
            // machine took 11 s (6 busy processes on 2 CPUs beside the suite).
            #expect(ContinuousClock.now - started < .seconds(30 * testTimeScale))
        }
    }

    /// The body drips for 100 s: however slowly a loaded machine hands the
    /// consumer its first chunk, the cancel comes long before the end.
    @Test(arguments: Backend.allCases)
    func cancellingMidBody_endsWithCancelled(backend: Backend) async throws {
        try await withBackend(backend) { endpoint in
            let session = Session(configuration: endpoint.configuration)
            let task = session.dataTask(with: endpoint.url("/drip/20000?chunk=10&interval=50"))
            task.resume()
            var received = 0
            do {
                for try await event in task.events {
                    if case .data(let chunk) = event {
                        received += chunk.count
                        task.cancel()
                    }
                }
                Issue.record("the task was not cancelled")
            } catch {
                #expect((error as? URLError)?.code == .cancelled)
            }
            #expect(received > 0 && received < 20000)
        }
    }

    @Test(arguments: Backend.allCases)
    func aConsumerThatStops_holdsTheBodyBack(backend: Backend) async throws {
        try await withBackend(backend) { endpoint in
            var configuration = endpoint.configuration
            configuration.streamBufferHighWatermark = 256 << 10
            configuration.streamBufferLowWatermark = 64 << 10
            let session = Session(configuration: configuration)
            let task = session.dataTask(with: endpoint.url("/bytes/67108864"))
            task.resume()
            var iterator = task.events.makeAsyncIterator()
            // Take the head and one chunk, then stop reading for a while.
            while let event = try await iterator.next() {
                if case .data = event { break }
            }
            try await Task.sleep(for: .milliseconds(500))
            // libcurl's and the kernel's buffers hold some more on the
            // network; nowhere near the 64 MiB body.
            #expect(task.countOfBytesReceived < 8 << 20)
            task.cancel()
        }
    }

    @Test(arguments: Backend.allCases)
    func dataForRequest_returnsAnErrorStatusAsAResponse(backend: Backend) async throws {
        try await withBackend(backend) { endpoint in
            let session = Session(configuration: endpoint.configuration)
            let (_, response) = try await session.data(from: endpoint.url("/status/404"))
            #expect((response as? HTTPURLResponse)?.statusCode == 404)
        }
    }
}
