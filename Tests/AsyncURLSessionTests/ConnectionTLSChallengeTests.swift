import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Synchronization
import Testing

/// TLS challenges on WebSocket and stream connections: a handler judges the
/// chain as a task's handler does.
@Suite struct ConnectionTLSChallengeTests {
    private func wssURL(_ server: LoopbackServer, _ path: String) -> URL {
        URL(string: "wss://127.0.0.1:\(server.port)\(path)")!
    }

    /// Trusts every chain it is shown and counts them.
    final class Truster: Sendable {
        let seen = Mutex<[ServerTrust]>([])
        let answer: @Sendable (ChallengeDecision, ServerTrust) -> Void

        init(_ answer: @escaping @Sendable (ChallengeDecision, ServerTrust) -> Void = { $0.useCredential(URLCredential(trust: $1)) }) {
            self.answer = answer
        }

        var handler: @Sendable (ChallengeDecision) async -> Void {
            { [self] decision in
                guard let trust = decision.protectionSpace.serverTrust else { return }
                seen.withLock { $0.append(trust) }
                answer(decision, trust)
            }
        }
    }

    @Test func webSocket_untrustedChain_trustedByTheHandler_opens() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let truster = Truster()
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wssURL(server, "/ws/echo"))
            socket.challengeHandler = truster.handler
            socket.resume()
            try await socket.send(.string("trusted"))
            #expect(try await socket.receive() == .string("trusted"))
            #expect(truster.seen.withLock { $0.count } == 1)
            #expect(truster.seen.withLock { $0.first?.verificationError } != nil)
            socket.cancel()
        }
    }

    @Test func webSocket_handlerCancelling_failsAsCancelled() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let truster = Truster { decision, _ in decision.cancel() }
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wssURL(server, "/ws/echo"))
            socket.challengeHandler = truster.handler
            socket.resume()
            let error = await #expect(throws: URLError.self) { try await socket.send(.string("x")) }
            #expect(error?.code == .cancelled)
        }
    }

    @Test func webSocket_defaultHandling_keepsDefaultVerification() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let truster = Truster { decision, _ in decision.performDefaultHandling() }
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wssURL(server, "/ws/echo"))
            socket.challengeHandler = truster.handler
            socket.resume()
            let error = await #expect(throws: URLError.self) { try await socket.send(.string("x")) }
            #expect(error?.code == .serverCertificateUntrusted)
        }
    }

    @Test func stream_untrustedChain_trustedByTheHandler_speaksTLS() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: false)) { server in
            let truster = Truster()
            let stream = Session(configuration: testConfiguration()).streamTask(withHostName: "127.0.0.1", port: server.port)
            stream.challengeHandler = truster.handler
            stream.startSecureConnection()
            try await stream.write(
                Data("GET /bytes/5 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8), timeout: scaledTimeout(10))
            var response = Data()
            for _ in 0..<1000 {
                let (data, atEOF) = try await stream.read(minLength: 1, maxLength: 65536, timeout: scaledTimeout(10))
                response.append(data)
                if atEOF { break }
            }
            #expect(response.suffix(5) == LoopbackServer.patternBody(count: 5))
            #expect(truster.seen.withLock { $0.count } == 1)
        }
    }
}
