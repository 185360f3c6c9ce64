import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// HTTP over Unix domain sockets (issue 55): `http+unix://` URLs, a
/// session's `unixSocket`, a task's own; connections reused per socket.
@Suite struct UnixSocketTests {
    /// A short path of its own under /tmp (sun_path holds 108 bytes); the
    /// server removes its socket at shutdown.
    private static func socketPath(_ tag: String = "") -> String {
        "/tmp/aus-\(getpid())-\(UInt32.random(in: 0...UInt32.max))\(tag).sock"
    }

    private func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func header(_ name: String, in data: Data) throws -> String? {
        let headers = try #require(try json(data)["headers"] as? [[String]])
        return headers.first { $0.first?.lowercased() == name }?.last
    }

    @Test func unixURL_get_reachesTheServerOnTheSocket() async throws {
        try await withServer(LoopbackServer.Options(unixSocketPath: Self.socketPath())) { server in
            #expect(server.baseURL.scheme == "http+unix")
            let (data, response) = try await Session(configuration: testConfiguration()).data(from: server.url("/echo?q=1"))
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == 200)
            // The response is for the URL the task asked for.
            #expect(http.url == server.url("/echo?q=1"))
            #expect(try json(data)["uri"] as? String == "/echo?q=1")
            #expect(try header("host", in: data) == "localhost")
        }
    }

    @Test func unixURL_postWithABody_andKeepAliveOverOneConnection() async throws {
        try await withServer(LoopbackServer.Options(unixSocketPath: Self.socketPath())) { server in
            let session = Session(configuration: testConfiguration())
            for round in 1...3 {
                var request = URLRequest(url: server.url("/echo"))
                request.httpMethod = "POST"
                request.httpBody = Data(repeating: 7, count: 1000 * round)
                let (data, _) = try await session.data(for: request)
                #expect(try json(data)["bodyLength"] as? Int == 1000 * round)
            }
            #expect(server.acceptedConnections == 1)
        }
    }

    @Test func unixURL_chunkedStreaming() async throws {
        try await withServer(LoopbackServer.Options(unixSocketPath: Self.socketPath())) { server in
            let (bytes, response) = try await Session(configuration: testConfiguration()).bytes(for: URLRequest(url: server.url("/chunked/100000")))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            var count = 0
            for try await _ in bytes { count += 1 }
            #expect(count == 100_000)
        }
    }

    @Test func sessionSocket_dockerShapedRequest() async throws {
        let path = Self.socketPath()
        try await withServer(LoopbackServer.Options(unixSocketPath: path)) { server in
            var configuration = testConfiguration()
            configuration.unixSocket = try .path(path)
            let url = try #require(URL(string: "http://localhost/echo?path=/v1.43/containers/json"))
            let (data, response) = try await Session(configuration: configuration).data(from: url)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(try header("host", in: data) == "localhost")
        }
    }

    @Test func taskSocket_winsOverTCP() async throws {
        let path = Self.socketPath()
        try await withServer(LoopbackServer.Options(unixSocketPath: path)) { server in
            // Port 9 (discard) on loopback: nothing listens; the socket is used instead.
            let task = Session(configuration: testConfiguration()).dataTask(with: URL(string: "http://127.0.0.1:9/bytes/5")!)
            task.unixSocket = try .path(path)
            task.collectBody()
            task.resume()
            let (data, _) = try await task.collectedData()
            #expect(data.count == 5)
        }
    }

    @Test func twoSocketsInOneSession_keptApart() async throws {
        try await withServer(LoopbackServer.Options(unixSocketPath: Self.socketPath("a"))) { first in
            try await withServer(LoopbackServer.Options(unixSocketPath: Self.socketPath("b"))) { second in
                let session = Session(configuration: testConfiguration())
                for _ in 1...2 {
                    let (one, _) = try await session.data(from: first.url("/bytes/1"))
                    let (two, _) = try await session.data(from: second.url("/bytes/2"))
                    #expect(one.count == 1)
                    #expect(two.count == 2)
                }
                #expect(first.acceptedConnections == 1)
                #expect(second.acceptedConnections == 1)
            }
        }
    }

    @Test func missingSocket_failsNamingThePath() async throws {
        let path = Self.socketPath("-missing")
        var configuration = testConfiguration()
        configuration.unixSocket = try .path(path)
        let error = await #expect(throws: URLError.self) {
            _ = try await Session(configuration: configuration).data(from: URL(string: "http://localhost/")!)
        }
        #expect(error?.code == .cannotConnectToHost)
        #expect(error?.localizedDescription.contains(path) == true)
        #expect(error?.localizedDescription.contains("no such file") == true)
    }

    @Test func notASocket_failsSayingSo() async throws {
        let path = Self.socketPath("-file")
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        defer { unlink(path) }
        let encoded = try #require(path.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let error = await #expect(throws: URLError.self) {
            _ = try await Session(configuration: testConfiguration()).data(from: URL(string: "http+unix://\(encoded)/")!)
        }
        #expect(error?.code == .cannotConnectToHost)
        #expect(error?.localizedDescription.contains("not a socket") == true)
    }

    @Test func badPaths_areRefused() async throws {
        #expect(throws: UnixSocket.Problem.self) { try UnixSocket.path(String(repeating: "a", count: 108)) }
        #expect(throws: UnixSocket.Problem.self) { try UnixSocket.path("") }
        #expect(throws: UnixSocket.Problem.self) { try UnixSocket.path("/tmp/a\0b") }
        #expect(throws: Never.self) { try UnixSocket.path("/" + String(repeating: "a", count: 106)) }
        let long = "%2F" + String(repeating: "a", count: 120)
        let error = await #expect(throws: URLError.self) {
            _ = try await Session(configuration: testConfiguration()).data(from: URL(string: "http+unix://\(long)/")!)
        }
        #expect(error?.code == .badURL)
        #expect(error?.localizedDescription.contains("sun_path") == true)
    }

    @Test func redirectFromTCP_intoASocket_isNotFollowed() async throws {
        try await withServer { server in
            let target = "http+unix://%2Fvar%2Frun%2Fdocker.sock/containers/json"
            let encoded = try #require(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let (_, response) = try await Session(configuration: testConfiguration())
                .data(from: server.url("/redirect-to?location=\(encoded)"))
            #expect((response as? HTTPURLResponse)?.statusCode == 302)
        }
    }

    @Test func abstractSocket_missing_failsNamingIt() async throws {
        var configuration = testConfiguration()
        configuration.unixSocket = try .abstract("aus-none-\(getpid())")
        let error = await #expect(throws: URLError.self) {
            _ = try await Session(configuration: configuration).data(from: URL(string: "http://localhost/")!)
        }
        #expect(error?.code == .cannotConnectToHost)
        #expect(error?.localizedDescription.contains("@aus-none-") == true)
    }
}
