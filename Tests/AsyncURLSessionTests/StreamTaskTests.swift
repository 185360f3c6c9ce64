import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// `StreamTask`: bytes over TCP (and TLS), used the way stream-task code
/// does: speaking HTTP/1.1 by hand to the loopback server.
@Suite struct StreamTaskTests {
    private func request(_ path: String) -> Data {
        Data("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
    }

    /// Everything until the peer closes.
    private func readToEnd(_ stream: StreamTask) async throws -> Data {
        var all = Data()
        for _ in 0..<10_000 {
            let (data, atEOF) = try await stream.read(minLength: 1, maxLength: 65536, timeout: scaledTimeout(10))
            all.append(data)
            if atEOF { return all }
        }
        return all
    }

    @Test func plainTCP_carriesAHandWrittenRequest() async throws {
        try await withServer { server in
            let stream = Session(configuration: testConfiguration()).streamTask(withHostName: "127.0.0.1", port: server.port)
            stream.resume()
            try await stream.write(request("/bytes/10"), timeout: scaledTimeout(10))
            let response = try await readToEnd(stream)
            #expect(String(decoding: response.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK")
            #expect(response.suffix(10) == LoopbackServer.patternBody(count: 10))
        }
    }

    @Test func bytes_yieldsEverythingUntilThePeerCloses() async throws {
        try await withServer { server in
            let stream = Session(configuration: testConfiguration()).streamTask(withHostName: "127.0.0.1", port: server.port)
            try await stream.write(request("/bytes/100000"), timeout: scaledTimeout(10))
            var all = Data()
            for try await chunk in stream.bytes { all.append(chunk) }
            #expect(String(decoding: all.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK")
            #expect(all.suffix(100_000) == LoopbackServer.patternBody(count: 100_000))
        }
    }

    @Test func startSecureConnection_afterResume_speaksTLS() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: false)) { server in
            let stream = Session(configuration: testConfiguration(trusting: server))
                .streamTask(withHostName: "127.0.0.1", port: server.port)
            stream.resume()
            stream.startSecureConnection()
            try await stream.write(request("/bytes/5"), timeout: scaledTimeout(10))
            let response = try await readToEnd(stream)
            #expect(String(decoding: response.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK")
            #expect(response.suffix(5) == LoopbackServer.patternBody(count: 5))
        }
    }

    @Test func untrustedTLS_fails() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let stream = Session(configuration: testConfiguration()).streamTask(withHostName: "127.0.0.1", port: server.port)
            stream.startSecureConnection()
            let error = await #expect(throws: URLError.self) { try await stream.write(request("/"), timeout: 5) }
            #expect(error?.code == .serverCertificateUntrusted)
        }
    }

    @Test func startSecureConnection_afterTheFirstWrite_failsSayingSo() async throws {
        try await withServer { server in
            let stream = Session(configuration: testConfiguration()).streamTask(withHostName: "127.0.0.1", port: server.port)
            try await stream.write(Data("G".utf8), timeout: 5)
            stream.startSecureConnection()
            let error = await #expect(throws: URLError.self) { try await stream.write(Data("ET".utf8), timeout: 5) }
            #expect(error?.localizedDescription.contains("startSecureConnection") == true)
        }
    }

    @Test func readTimeout_isTimedOut() async throws {
        try await withServer { server in
            let stream = Session(configuration: testConfiguration()).streamTask(withHostName: "127.0.0.1", port: server.port)
            let error = await #expect(throws: URLError.self) {
                _ = try await stream.read(minLength: 1, maxLength: 10, timeout: 0.3)
            }
            #expect(error?.code == .timedOut)
            stream.cancel()
        }
    }

    @Test func minLength_waitsForThatMany() async throws {
        try await withServer { server in
            let stream = Session(configuration: testConfiguration()).streamTask(withHostName: "127.0.0.1", port: server.port)
            try await stream.write(request("/bytes/3000"), timeout: 5)
            let (data, _) = try await stream.read(minLength: 2000, maxLength: 2500, timeout: scaledTimeout(10))
            #expect(data.count >= 2000 && data.count <= 2500)
        }
    }

    @Test func writeAfterCloseWrite_fails() async throws {
        try await withServer { server in
            let stream = Session(configuration: testConfiguration()).streamTask(withHostName: "127.0.0.1", port: server.port)
            try await stream.write(Data("x".utf8), timeout: 5)
            stream.closeWrite()
            await #expect(throws: URLError.self) { try await stream.write(Data("y".utf8), timeout: 5) }
        }
    }

    @Test func refusedConnection_fails() async throws {
        let reservation = try PortReservation()
        defer { reservation.release() }
        let stream = Session(configuration: testConfiguration()).streamTask(withHostName: "127.0.0.1", port: reservation.port)
        let error = await #expect(throws: URLError.self) { try await stream.write(Data("x".utf8), timeout: 5) }
        #expect(error?.code == .cannotConnectToHost)
    }
}
