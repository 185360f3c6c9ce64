import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

/// The engine recycles libcurl handles and keeps the options of a handle
/// whose next transfer has the same shape. Each request must still go out
/// exactly as asked, with nothing of the previous one.
@Suite struct HandleReuseTests {
    /// One connection, so consecutive requests run on recycled handles.
    private func oneConnectionSession() -> Session {
        var configuration = testConfiguration()
        configuration.httpMaximumConnectionsPerHost = 1
        return Session(configuration: configuration)
    }

    @Test func sameShapeRequests_eachSendsItsOwnURLAndHeaders() async throws {
        try await withServer { server in
            let session = oneConnectionSession()
            for index in 0..<6 {
                var request = URLRequest(url: server.url("/echo?n=\(index)"))
                if index.isMultiple(of: 2) { request.setValue("\(index)", forHTTPHeaderField: "X-Only-Even") }
                let (data, _) = try await session.data(for: request)
                let echo = try JSONDecoder().decode(Echo.self, from: data)
                #expect(echo.method == "GET")
                #expect(echo.uri == "/echo?n=\(index)")
                #expect(echo.value(of: "x-only-even") == (index.isMultiple(of: 2) ? "\(index)" : nil))
            }
        }
    }

    /// The default User-Agent is a handle option, kept between transfers of
    /// one shape: a request with its own sends only that one, and the next
    /// default request the default again.
    @Test func userAgent_defaultOrOwn_exactlyOnePerRequest() async throws {
        try await withServer { server in
            let session = oneConnectionSession()
            for own in [nil, "Custom/1", nil, nil, "Custom/2"] as [String?] {
                var request = URLRequest(url: server.url("/echo"))
                if let own { request.setValue(own, forHTTPHeaderField: "User-Agent") }
                let (data, _) = try await session.data(for: request)
                let echo = try JSONDecoder().decode(Echo.self, from: data)
                let agents = echo.headers.filter { $0.first?.lowercased() == "user-agent" }.compactMap { $0.last }
                #expect(agents == [own ?? "AsyncURLSession"])
            }
        }
    }

    /// A transfer alone on its I/O thread reads 64 KiB at a time, one beside
    /// others 16 KiB (`ReceiveBufferSize`), so one recycled handle changes
    /// size between transfers: alone, then three at once, then alone again.
    /// Every body must arrive whole, through both kinds of consumer.
    @Test func handlesSwitchingReceiveBufferSizes_deliverWholeBodies() async throws {
        try await withServer { server in
            let session = oneConnectionSession()
            let size = 300_000
            let expected = LoopbackServer.patternBody(count: size)
            let url = server.url("/bytes/\(size)")
            for round in [1, 3, 1, 3] {
                let bodies = try await withThrowingTaskGroup(of: Data.self) { group in
                    for index in 0..<round {
                        group.addTask {
                            if index.isMultiple(of: 2) { return try await session.data(from: url).0 }
                            let task = session.dataTask(with: URLRequest(url: url))
                            task.resume()
                            return await record(task).body
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(bodies.count == round)
                for body in bodies { #expect(body == expected) }
            }
        }
    }

    @Test func sameShapeUploads_eachSendsItsOwnBody() async throws {
        try await withServer { server in
            let session = oneConnectionSession()
            for size in [300_000, 10, 70_000] {
                var request = URLRequest(url: server.url("/echo"))
                request.httpMethod = "POST"
                let (data, _) = try await session.upload(for: request, from: LoopbackServer.patternBody(count: size))
                let echo = try JSONDecoder().decode(Echo.self, from: data)
                #expect(echo.method == "POST")
                #expect(echo.bodyLength == size)
            }
        }
    }

    /// The sticky-method trap (CVE-2022-32221): after a POST and a PUT, a GET
    /// on the same handle must be a GET without a body.
    @Test func getAfterPostAndPut_isAPlainGet() async throws {
        try await withServer { server in
            let session = oneConnectionSession()
            for method in ["POST", "PUT"] {
                var request = URLRequest(url: server.url("/echo"))
                request.httpMethod = method
                request.httpBody = Data("body".utf8)
                _ = try await session.data(for: request)
            }
            let (data, _) = try await session.data(from: server.url("/echo"))
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.method == "GET")
            #expect(echo.bodyLength == 0)
            #expect(echo.value(of: "content-length") == nil)
        }
    }

    /// A handle whose transfer failed starts the next one from a reset.
    @Test func requestAfterAFailedOne_succeeds() async throws {
        try await withServer { server in
            let session = oneConnectionSession()
            await #expect(throws: URLError.self) {
                _ = try await session.data(from: server.url("/drop/100000?after=30000"))
            }
            let (data, _) = try await session.data(from: server.url("/bytes/100"))
            #expect(data == LoopbackServer.patternBody(count: 100))
        }
    }
}
