import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Content-Encoding: libcurl decodes what the request's Accept-Encoding
/// named, and the body arrives decoded on every path. /gzip/N's encoded
/// length is a little more than N, so a Content-Length check on the decoded
/// bytes would call every such response truncated.
@Suite struct ContentDecodingTests {
    @Test func gzipBody_arrivesDecoded_throughDataFor() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let (data, response) = try await session.data(from: server.url("/gzip/300000"))
            #expect(data == LoopbackServer.patternBody(count: 300_000))
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
            #expect(http.expectedContentLength > 300_000, "the encoded length, as URLSession reports it")
        }
    }

    @Test func gzipBody_arrivesDecoded_throughEvents() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/gzip/200000"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.body == LoopbackServer.patternBody(count: 200_000))
        }
    }

    @Test func requestedAcceptEncoding_isSentAsGivenOnce() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            var request = URLRequest(url: server.url("/echo"))
            request.setValue("gzip", forHTTPHeaderField: "Accept-Encoding")
            let (data, _) = try await session.data(for: request)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            let sent = echo.headers.filter { $0.first?.lowercased() == "accept-encoding" }
            #expect(sent.map { $0.count > 1 ? $0[1] : "" } == ["gzip"])
        }
    }

    @Test func defaultAcceptEncoding_offersGzip() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let (data, _) = try await session.data(from: server.url("/echo"))
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.value(of: "accept-encoding")?.contains("gzip") == true)
        }
    }
}
