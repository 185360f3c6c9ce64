import Foundation
import LoopbackServer
import Testing

/// Clients that go away, or are cut off on purpose, must not disturb the server.
@Suite(.timeLimit(.scaledMinutes(1))) struct RobustnessTests {
    @Test func survivesClientsThatLeaveMidBody() async throws {
        try await withServer { server in
            // Slow readers that give up: the server must wait for them, then notice they left.
            try await withThrowingTaskGroup(of: CurlResult.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await curl(["--limit-rate", "200k", "--max-time", "0.5"], url: server.url("/bytes/1073741824"))
                    }
                }
                for try await result in group {
                    #expect(result.exitCode == 28, "\(result.stderr)")  // curl's own timeout
                }
            }
            let (data, response) = try await fetch(server.url("/bytes/100"), session: makeSession())
            #expect(response.statusCode == 200)
            #expect(data == LoopbackServer.patternBody(count: 100))
        }
    }

    @Test func dropAndCloseDelimitedEndTheConnection() async throws {
        try await withServer { server in
            let dropped = try await curl([], url: server.url("/drop/100000?after=30000"))
            #expect(dropped.exitCode == 18, "\(dropped.stderr)")  // transfer closed with bytes remaining
            #expect(dropped.body == LoopbackServer.patternBody(count: 30_000))

            let closeDelimited = try await curl(["-w", "%{http_version}"], url: server.url("/close-delimited/100000"))
            #expect(closeDelimited.exitCode == 0, "\(closeDelimited.stderr)")
            #expect(closeDelimited.writeOut == "1")  // curl prints HTTP/1.0 as "1"
            #expect(closeDelimited.body == LoopbackServer.patternBody(count: 100_000))
        }
    }

    @Test func manyConcurrentConnections() async throws {
        try await withServer(seconds: 60) { server in
            // Each request gets its own session, hence its own connection; all wait at once.
            let ids = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        let (data, _) = try await fetch(server.url("/delay/300"), session: makeSession())
                        #expect(String(decoding: data, as: UTF8.self) == "ok")
                        let (id, _) = try await fetch(server.url("/connection"), session: makeSession())
                        return String(decoding: id, as: UTF8.self)
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(ids.count == 200)
            #expect(server.acceptedConnections == 400)
        }
    }

    @Test func forgottenShutdownDoesNotCrash() async throws {
        try await withDeadline {
            var server: LoopbackServer? = try await LoopbackServer.start(.init(tls: true))
            let url = try #require(server?.url("/connection"))
            server = nil  // deinit stops the server's thread in the background
            try await Task.sleep(for: .milliseconds(300))
            let result = try await curl(["-k"], url: url)
            #expect(result.exitCode != 0, "the listener is gone")
        }
    }
}
