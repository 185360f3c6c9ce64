import AsyncURLSession
import Crypto
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// Fields a response sends after its body (chunked HTTP/1.1, HTTP/2):
/// `.trailers` after the last `.data` for `task.events`, and
/// `SessionTask.trailers` once the task has ended, for every other way of
/// reading a body.
@Suite struct TrailerTests {
    private let query = "/trailers?X-Checksum=abc123&Server-Timing=db%3Bdur%3D53"

    private func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    @Test func trailers_comeAfterTheLastData_andBeforeTheMetrics() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url(query))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(String(decoding: recorded.body, as: UTF8.self) == "trailed body")
            #expect(recorded.kinds == ["response", "data", "trailers", "metrics"])
            #expect(recorded.trailers?["x-checksum"] == "abc123")
            #expect(recorded.trailers?["Server-Timing"] == "db;dur=53")
            #expect(task.trailers == recorded.trailers)
        }
    }

    @Test func trailers_overHTTP2_areDelivered() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: true)) { server in
            let task = Session(configuration: testConfiguration(trusting: server)).dataTask(with: server.url(query))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.kinds == ["response", "data", "trailers", "metrics"])
            #expect(recorded.trailers?["X-Checksum"] == "abc123")
            #expect(task.metrics?.transactionMetrics.last?.networkProtocolName == "h2")
        }
    }

    @Test func collectedData_readsTheTrailersFromTheTask() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url(query))
            #expect(task.collectBody())
            task.resume()
            let (data, _) = try await task.collectedData()
            #expect(String(decoding: data, as: UTF8.self) == "trailed body")
            #expect(task.trailers?["X-Checksum"] == "abc123")
        }
    }

    @Test func bytes_readTheTrailersOnceTheBodyIsRead() async throws {
        try await withServer { server in
            let (bytes, _) = try await Session(configuration: testConfiguration()).bytes(from: server.url(query))
            var body: [UInt8] = []
            for try await byte in bytes { body.append(byte) }
            #expect(String(decoding: body, as: UTF8.self) == "trailed body")
            #expect(bytes.task.trailers?["X-Checksum"] == "abc123")
        }
    }

    @Test func aResponseWithoutTrailers_hasNoTrailersEvent() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/chunked/100"))
            task.resume()
            let recorded = await record(task)
            #expect(!recorded.kinds.contains("trailers"))
            #expect(task.trailers == nil)
        }
    }

    // MARK: - Sending

    @Test func streamedBody_endsWithTheTrailersItsProviderGives() async throws {
        try await withServer { server in
            let chunks = (0..<5).map { LoopbackServer.patternBody(count: 10_000, offset: $0 * 10_000) }
            let whole = chunks.reduce(Data(), +)
            let task = Session(configuration: testConfiguration())
                .uploadTask(withStreamedRequest: URLRequest(url: server.url("/echo")))
            task.resume()
            var body = Data()
            for try await event in task.events {
                switch event {
                case .needBodyStream(let decision):
                    let stream = asyncChunks(chunks)
                    decision.provide(stream) { [(name: "X-Body-SHA256", value: sha256(whole)), (name: "X-Count", value: "5")] }
                case .data(let chunk): body.append(chunk)
                default: break
                }
            }
            let echo = try JSONDecoder().decode(Echo.self, from: body)
            #expect(echo.bodyLength == whole.count)
            #expect(echo.value(of: "transfer-encoding") == "chunked")
            #expect(echo.trailer("x-body-sha256") == sha256(whole))
            #expect(echo.trailer("x-count") == "5")
        }
    }

    @Test func trailerWithCRLF_failsTheTask_andNothingIsInjected() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration())
                .uploadTask(withStreamedRequest: URLRequest(url: server.url("/echo")))
            task.resume()
            var failure: (any Error)?
            do {
                for try await event in task.events {
                    if case .needBodyStream(let decision) = event {
                        decision.provide(AsyncStream<Data> { $0.yield(Data("x".utf8)); $0.finish() }) {
                            [(name: "X-Evil", value: "1\r\nX-Injected: yes")]
                        }
                    }
                }
            } catch {
                failure = error
            }
            #expect((failure as? URLError)?.code == .requestBodyStreamExhausted)
            #expect((failure as? URLError)?.localizedDescription.contains("X-Evil") == true)
        }
    }

    @Test func trailers_withAContentLength_failClearly() async throws {
        try await withServer { server in
            var request = URLRequest(url: server.url("/echo"))
            request.setValue("1", forHTTPHeaderField: "Content-Length")
            let task = Session(configuration: testConfiguration()).uploadTask(withStreamedRequest: request)
            task.resume()
            var failure: (any Error)?
            do {
                for try await event in task.events {
                    if case .needBodyStream(let decision) = event {
                        decision.provide(AsyncStream<Data> { $0.yield(Data("x".utf8)); $0.finish() }) { [] }
                    }
                }
            } catch {
                failure = error
            }
            #expect((failure as? URLError)?.localizedDescription.contains("remove Content-Length") == true)
            #expect(server.acceptedConnections == 0)
        }
    }
}
