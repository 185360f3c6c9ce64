import Foundation
import LoopbackServer
import Testing

/// /multipart-replace and the /cookies routes, with the curl command line as the client.
@Suite(.timeLimit(.scaledMinutes(1))) struct ContentRouteTests {
    /// The body /multipart-replace must send.
    static func multipart(parts: Int, size: Int) -> Data {
        var body = Data()
        for _ in 0..<parts {
            body += Data("--loopbackboundary\r\nContent-Type: text/plain\r\nContent-Length: \(size)\r\n\r\n".utf8)
            body += LoopbackServer.patternBody(count: size)
            body += Data("\r\n".utf8)
        }
        return body + Data("--loopbackboundary--\r\n".utf8)
    }

    @Test(arguments: [false, true])
    func multipartReplaceSendsPacedParts(http2: Bool) async throws {
        try await withServer(http2: http2) { server, reach in
            let started = ContinuousClock.now
            let result = try await curl(reach + ["-w", "%{http_version}"], url: server.url("/multipart-replace?parts=4&size=1000&interval=100"))
            let elapsed = ContinuousClock.now - started
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(result.writeOut == (http2 ? "2" : "1.1"))
            #expect(result.headerValues("content-type") == ["multipart/x-mixed-replace; boundary=loopbackboundary"])
            if !http2 {
                #expect(result.headerValues("transfer-encoding") == ["chunked"])
            }
            #expect(result.body == Self.multipart(parts: 4, size: 1000))
            #expect(elapsed >= .milliseconds(300), "three intervals between four parts")
        }
    }

    @Test func multipartDefaultsAndNoParts() async throws {
        try await withServer { server in
            let defaults = try await curl([], url: server.url("/multipart-replace"))
            #expect(defaults.body == Self.multipart(parts: 3, size: 16))
            let empty = try await curl([], url: server.url("/multipart-replace?parts=0"))
            #expect(empty.body == Self.multipart(parts: 0, size: 0))
            let tooBig = try await curl(["-w", "%{http_code}"], url: server.url("/multipart-replace?parts=10000&size=1000000"))
            #expect(tooBig.writeOut == "400")
        }
    }

    @Test(arguments: [false, true])
    func cookiesAreSetAndEchoed(http2: Bool) async throws {
        try await withServer(http2: http2) { server, reach in
            let set = try await curl(reach + ["-w", "%{http_code}"], url: server.url("/cookies/set?a=1&b=two"))
            #expect(set.writeOut == "200")
            #expect(set.headerValues("set-cookie") == ["a=1; Path=/", "b=two; Path=/"])

            let sent = try await curl(reach + ["-b", "a=1; b=two"], url: server.url("/cookies/echo"))
            #expect(String(decoding: sent.body, as: UTF8.self) == "a=1; b=two")
            let none = try await curl(reach + ["-w", "%{http_code}"], url: server.url("/cookies/echo"))
            #expect(none.writeOut == "200")
            #expect(none.body.isEmpty)
        }
    }

    @Test func cookieJarRoundTrip() async throws {
        try await withServer { server in
            let jar = FileManager.default.temporaryDirectory.appendingPathComponent("loopback-\(UUID().uuidString)-jar")
            defer { try? FileManager.default.removeItem(at: jar) }
            _ = try await curl(["-c", jar.path], url: server.url("/cookies/set?session=abc&theme=dark"))
            let echoed = try await curl(["-b", jar.path], url: server.url("/cookies/echo"))
            let cookies = String(decoding: echoed.body, as: UTF8.self).components(separatedBy: "; ")
            #expect(Set(cookies) == ["session=abc", "theme=dark"])
        }
    }
}
