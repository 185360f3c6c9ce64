import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// A WebSocket over a Unix domain socket (issue 55): the session's
/// `unixSocket` carries the upgrade and the frames, as curl's
/// `--unix-socket` does for `ws://localhost/...`.
@Suite struct UnixSocketWebSocketTests {
    @Test func sessionSocket_carriesAWebSocket() async throws {
        let path = "/tmp/aus-ws-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        try await withServer(LoopbackServer.Options(unixSocketPath: path)) { server in
            var configuration = testConfiguration()
            configuration.unixSocket = try .path(path)
            let socket = Session(configuration: configuration)
                .webSocketTask(with: URL(string: "ws://localhost/ws/echo")!)
            socket.resume()
            try await socket.send(.string("over a unix socket"))
            #expect(try await socket.receive() == .string("over a unix socket"))
            socket.cancel(with: .normalClosure, reason: nil)
            #expect(server.acceptedConnections == 1)
        }
    }
}
