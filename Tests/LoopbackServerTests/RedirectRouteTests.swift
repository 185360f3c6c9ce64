import Foundation
import LoopbackServer
import Testing

/// /redirect-raw, /redirect-no-location, /redirect-echo and /cross-origin-redirect, with the
/// curl command line as the client.
@Suite(.timeLimit(.scaledMinutes(1))) struct RedirectRouteTests {
    /// Query value as sent, and the Location bytes the server must write for it.
    static let rawLocations: [(query: String, bytes: [UInt8])] = [
        ("%2Fecho%0Dx", Array("/echo\rx".utf8)),
        ("%2Fa%0D%0AX-Injected:%201", Array("/a\r\nX-Injected: 1".utf8)),
        ("%2Fa%20b", Array("/a b".utf8)),
        ("%2F%C3%A9", Array("/é".utf8)),
        ("%2F%E9", [UInt8(ascii: "/"), 0xE9]),
        ("javascript:alert(1)", Array("javascript:alert(1)".utf8)),
        ("file:///etc/passwd", Array("file:///etc/passwd".utf8)),
        ("ftp://127.0.0.1/x", Array("ftp://127.0.0.1/x".utf8)),
        ("", []),
    ]

    @Test(arguments: rawLocations.indices)
    func rawLocationIsWrittenByteForByte(index: Int) async throws {
        let (query, bytes) = Self.rawLocations[index]
        try await withServer { server in
            let result = try await curl(["-w", "%{http_code}"], url: server.url("/redirect-raw?status=301&location=\(query)"))
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(result.writeOut == "301")
            #expect(result.headers.starts(with: Data("HTTP/1.1 301 Moved Permanently\r\n".utf8)))
            let line = Data("\r\nLocation: ".utf8) + Data(bytes) + Data("\r\n".utf8)
            #expect(result.headers.firstRange(of: line) != nil, "\(String(decoding: result.headers, as: UTF8.self).debugDescription)")
            #expect(String(decoding: result.body, as: UTF8.self) == "redirecting")
        }
    }

    @Test func rawSchemeRelativeLocationCanBeFollowed() async throws {
        try await withServer { server in
            let result = try await curl(
                ["-L", "-w", "%{http_code} %{num_redirects}"],
                url: server.url("/redirect-raw?location=//127.0.0.1:\(server.port)/echo")
            )
            #expect(result.writeOut == "200 1", "\(result.stderr)")
            #expect(result.headerValues("location") == ["//127.0.0.1:\(server.port)/echo"])
            let json = try #require(try JSONSerialization.jsonObject(with: result.body) as? [String: Any])
            #expect(json["uri"] as? String == "/echo")
        }
    }

    @Test func rawRedirectIsRefusedOverHTTP2() async throws {
        try await withServer(http2: true) { server, reach in
            let result = try await curl(reach + ["-w", "%{http_code} %{http_version}"], url: server.url("/redirect-raw?location=/x"))
            #expect(result.writeOut == "400 2", "\(result.stderr)")
        }
    }

    @Test func redirectWithoutLocation() async throws {
        try await withServer { server in
            let result = try await curl(["-L", "-w", "%{http_code} %{num_redirects}"], url: server.url("/redirect-no-location?status=302"))
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(result.writeOut == "302 0")
            #expect(result.headerValues("location").isEmpty)
        }
    }

    /// Status, whether HTTP/2 carries it, and the method and body length /echo finally gets
    /// from curl after a POST (curl turns POST into GET on 301, 302 and 303).
    static let methodCases: [(status: Int, http2: Bool, method: String, bodyLength: Int)] = [
        (301, false, "GET", 0),
        (302, false, "GET", 0),
        (303, false, "GET", 0),
        (307, false, "POST", 200_000),
        (308, false, "POST", 200_000),
        (303, true, "GET", 0),
        (307, true, "POST", 200_000),
    ]

    @Test(arguments: methodCases.indices)
    func redirectEchoReadsTheBodyThenRedirects(index: Int) async throws {
        let expected = Self.methodCases[index]
        try await withServer(http2: expected.http2) { server, reach in
            let upload = try temporaryFile(Data(repeating: UInt8(ascii: "u"), count: 200_000), name: "upload")
            defer { try? FileManager.default.removeItem(at: upload) }
            let result = try await curl(
                reach + ["-L", "--data-binary", "@\(upload.path)", "-w", "%{http_code} %{num_redirects}"],
                url: server.url("/redirect-echo?status=\(expected.status)")
            )
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(result.writeOut == "200 1")
            #expect(result.headerValues("location") == ["/echo"])
            let json = try #require(try JSONSerialization.jsonObject(with: result.body) as? [String: Any])
            #expect(json["method"] as? String == expected.method)
            #expect(json["bodyLength"] as? Int == expected.bodyLength)
        }
    }

    @Test func redirectEchoRefusesOtherStatuses() async throws {
        try await withServer { server in
            let result = try await curl(["-w", "%{http_code}"], url: server.url("/redirect-echo?status=304"))
            #expect(result.writeOut == "400")
        }
    }

    @Test func crossOriginRedirectLeadsToTheOtherServer() async throws {
        try await withServer { other in
            try await withServer { server in
                let result = try await curl(
                    ["-L", "--basic", "-u", "a:b", "-w", "%{http_code}"],
                    url: server.url("/cross-origin-redirect?port=\(other.port)&path=echo")
                )
                #expect(result.writeOut == "200", "\(result.stderr)")
                #expect(result.headerValues("location") == ["http://127.0.0.1:\(other.port)/echo"])
                #expect(other.acceptedConnections == 1)
                let json = try #require(try JSONSerialization.jsonObject(with: result.body) as? [String: Any])
                let headers = try #require(json["headers"] as? [[String]])
                // curl keeps credentials to the origin they were given for (port included).
                #expect(!headers.contains { $0.first?.lowercased() == "authorization" })
            }
        }
    }
}
