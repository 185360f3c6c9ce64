import AsyncURLSession
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// A streamed request body and a streamed response at once, against the
/// loopback server's /duplex-echo (each body piece sent back as it arrives;
/// the response ends after N bytes, whether or not the request body has).
/// The response's end must reach the consumer when the response ends, and
/// the body's producer is then told to stop.
@Suite struct FullDuplexTests {
    /// Sends `pieces` pieces of `size` bytes one at a time, each after the
    /// echo of the one before, and never ends the body: returns what came
    /// back, the task's end, and whether the producer was told to stop.
    private func pingPong(
        _ session: Session, _ url: URL, pieces: Int, size: Int
    ) async throws -> (echoed: Data, sent: Data, stopped: Bool) {
        let (chunks, continuation) = AsyncStream<Data>.makeStream()
        let stopped = Signal()
        continuation.onTermination = { _ in stopped.fire() }
        var sent = Data()
        func sendNext() {
            let piece = LoopbackServer.patternBody(count: size, offset: sent.count)
            sent.append(piece)
            continuation.yield(piece)
        }
        let task = session.uploadTask(withStreamedRequest: URLRequest(url: url))
        task.resume()
        var echoed = Data()
        for try await event in task.events {
            switch event {
            case .needBodyStream(let decision):
                decision.provide(chunks)
                sendNext()
            case .data(let chunk):
                echoed.append(chunk)
                if echoed.count == sent.count, sent.count < pieces * size { sendNext() }
            default:
                break
            }
        }
        // The stream ended without the body ever ending: its producer must
        // have been told to stop.
        await stopped.wait()
        return (echoed, sent, true)
    }

    @Test func chunkedResponse_overHTTP1_endsTheTask_whileTheBodyStillStreams() async throws {
        try await withServer { server in
            let (echoed, sent, stopped) = try await pingPong(
                Session(configuration: testConfiguration()), server.url("/duplex-echo?bytes=10000"), pieces: 100, size: 100)
            #expect(echoed == sent)
            #expect(echoed.count == 10_000)
            #expect(stopped)
        }
    }

    @Test func responseWithALength_overHTTP1_endsTheTask_whileTheBodyStillStreams() async throws {
        try await withServer { server in
            let (echoed, sent, _) = try await pingPong(
                Session(configuration: testConfiguration()), server.url("/duplex-echo?bytes=5000&declare=1"),
                pieces: 50, size: 100)
            #expect(echoed == sent)
        }
    }

    @Test func responseWithALength_overHTTP2_endsTheTask_whileTheBodyStillStreams() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: true)) { server in
            let session = Session(configuration: testConfiguration(trusting: server))
            let (echoed, sent, _) = try await pingPong(
                session, server.url("/duplex-echo?bytes=5000&declare=1"), pieces: 50, size: 100)
            #expect(echoed == sent)
        }
    }

    @Test func chunkedResponse_afterTheBodyEnded_isReadWhole_andTheConnectionServesTheNextRequest() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let body = LoopbackServer.patternBody(count: 70_000, offset: 0)
            let task = session.uploadTask(withStreamedRequest: URLRequest(url: server.url("/duplex-echo?bytes=1000000")))
            task.resume()
            var echoed = Data()
            for try await event in task.events {
                switch event {
                case .needBodyStream(let decision):
                    decision.provide(asyncChunks([body.prefix(30_000), body.dropFirst(30_000)]))
                case .data(let chunk): echoed.append(chunk)
                default: break
                }
            }
            #expect(echoed == body)
            let (data, _) = try await session.data(from: server.url("/bytes/10"))
            #expect(data.count == 10)
        }
    }

    @Test func trailersOfARawChunkedResponse_stillArrive() async throws {
        // A chunked response decoded by the engine (full duplex) keeps its
        // trailers: /trailers answers any method, and a streamed body makes
        // the engine decode its chunks.
        try await withServer { server in
            var request = URLRequest(url: server.url("/trailers?X-Sum=42"))
            request.httpMethod = "POST"
            let task = Session(configuration: testConfiguration()).uploadTask(withStreamedRequest: request)
            task.resume()
            let recorded = await record(task, providing: [Data("x".utf8)])
            #expect(String(decoding: recorded.body, as: UTF8.self) == "trailed body")
            #expect(recorded.trailers?["X-Sum"] == "42")
        }
    }
}
