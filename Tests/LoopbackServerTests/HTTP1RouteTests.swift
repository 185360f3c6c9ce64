import Foundation
import FoundationNetworking
import LoopbackServer
import Testing

/// Routes over plain HTTP/1.1, with URLSession as the client. Each test starts its own server.
@Suite(.timeLimit(.scaledMinutes(1))) struct HTTP1RouteTests {
    @Test func bytesHasLengthAndPattern() async throws {
        try await withServer { server in
            let count = 1_000_017  // several 64 KiB pieces plus a partial one
            let (data, response) = try await fetch(server.url("/bytes/\(count)"), session: makeSession())
            #expect(response.statusCode == 200)
            #expect(response.value(forHTTPHeaderField: "Content-Length") == "\(count)")
            #expect(data == LoopbackServer.patternBody(count: count))
        }
    }

    @Test func chunkedHasNoContentLengthAndSameBytes() async throws {
        try await withServer { server in
            let (data, response) = try await fetch(server.url("/chunked/100000?chunk=1000"), session: makeSession())
            #expect(response.statusCode == 200)
            #expect(response.value(forHTTPHeaderField: "Content-Length") == nil)
            #expect(response.value(forHTTPHeaderField: "Transfer-Encoding")?.lowercased() == "chunked")
            #expect(data == LoopbackServer.patternBody(count: 100_000))
        }
    }

    @Test func echoDescribesRequestAndHashesBody() async throws {
        try await withServer { server in
            var request = URLRequest(url: server.url("/echo?x=1&y=two"))
            request.httpMethod = "PUT"
            request.setValue("first", forHTTPHeaderField: "X-Loopback-Test")
            // The NIST SHA-256 test vector: one million "a".
            request.httpBody = Data(repeating: UInt8(ascii: "a"), count: 1_000_000)
            let (data, response) = try await fetch(request, session: makeSession())
            #expect(response.statusCode == 200)
            #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")

            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(json["method"] as? String == "PUT")
            #expect(json["uri"] as? String == "/echo?x=1&y=two")
            #expect(json["bodyLength"] as? Int == 1_000_000)
            #expect(json["bodySHA256"] as? String == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
            let headers = try #require(json["headers"] as? [[String]])
            #expect(headers.contains(["X-Loopback-Test", "first"]))
            #expect(headers.contains { $0.first?.lowercased() == "host" })
        }
    }

    @Test func echoOfEmptyBody() async throws {
        try await withServer { server in
            let (data, _) = try await fetch(server.url("/echo"), session: makeSession())
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(json["method"] as? String == "GET")
            #expect(json["bodyLength"] as? Int == 0)
            #expect(json["bodySHA256"] as? String == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        }
    }

    @Test func rangeServesPartialContentAndHonoursIfRange() async throws {
        try await withServer { server in
            let session = makeSession()
            let url = server.url("/range/100000?etag=abc")

            var partial = URLRequest(url: url)
            partial.setValue("bytes=70000-79999", forHTTPHeaderField: "Range")
            partial.setValue("\"abc\"", forHTTPHeaderField: "If-Range")
            let (data, response) = try await fetch(partial, session: session)
            #expect(response.statusCode == 206)
            #expect(response.value(forHTTPHeaderField: "Content-Range") == "bytes 70000-79999/100000")
            #expect(response.value(forHTTPHeaderField: "ETag") == "\"abc\"")
            #expect(data == LoopbackServer.patternBody(count: 10_000, offset: 70_000))

            var stale = URLRequest(url: url)
            stale.setValue("bytes=70000-", forHTTPHeaderField: "Range")
            stale.setValue("\"old\"", forHTTPHeaderField: "If-Range")
            let (full, fullResponse) = try await fetch(stale, session: session)
            #expect(fullResponse.statusCode == 200)
            #expect(full == LoopbackServer.patternBody(count: 100_000))

            var unsatisfiable = URLRequest(url: url)
            unsatisfiable.setValue("bytes=100000-", forHTTPHeaderField: "Range")
            let (_, refused) = try await fetch(unsatisfiable, session: session)
            #expect(refused.statusCode == 416)
            #expect(refused.value(forHTTPHeaderField: "Content-Range") == "bytes */100000")
        }
    }

    @Test func connectionIdsShowReuse() async throws {
        try await withServer { server in
            let session = makeSession()
            let (first, _) = try await fetch(server.url("/connection"), session: session)
            let (second, _) = try await fetch(server.url("/connection"), session: session)
            #expect(String(decoding: first, as: UTF8.self) == "1")
            #expect(String(decoding: second, as: UTF8.self) == "1", "a keep-alive session reuses connection 1")

            let (other, _) = try await fetch(server.url("/connection"), session: makeSession())
            #expect(String(decoding: other, as: UTF8.self) == "2")
            #expect(server.acceptedConnections == 2)
        }
    }

    @Test func unknownRouteIs404AndStatusRouteAnswers() async throws {
        try await withServer { server in
            let session = makeSession()
            let (_, missing) = try await fetch(server.url("/no/such/route"), session: session)
            #expect(missing.statusCode == 404)
            let (body, teapot) = try await fetch(server.url("/status/418"), session: session)
            #expect(teapot.statusCode == 418)
            #expect(String(decoding: body, as: UTF8.self) == "status 418")
        }
    }

    @Test func shutdownIsIdempotent() async throws {
        try await withDeadline {
            let server = try await LoopbackServer.start()
            _ = try await fetch(server.url("/bytes/10"), session: makeSession())
            try await server.shutdown()
            try await server.shutdown()
            await #expect(throws: (any Error).self) {
                _ = try await fetch(server.url("/bytes/10"), session: makeSession())
            }
        }
    }
}
