import Foundation
import URLSessionCompat

/// AsyncURLSession's classic adapter: `URLSessionWebSocketTask`.
struct ClassicEchoClient: EchoClient {
    let name = "URLSessionCompat URLSessionWebSocketTask"

    func roundTrips(url: URL, message: Data, count: Int, window: Int) async throws -> Duration {
        let socket = URLSession(configuration: .ephemeral).webSocketTask(with: url)
        socket.resume()
        defer { socket.cancel(with: .normalClosure, reason: nil) }
        try await socket.sendPing()  // open before the clock starts
        return try await EchoLoop.run(
            message: message, count: count, window: window,
            send: { try await socket.send(.data($0)) },
            receive: {
                guard case .data(let data) = try await socket.receive() else { throw EchoClientError("not binary") }
                return data.count
            })
    }
}
