import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// FoundationNetworking's `URLSessionWebSocketTask`: it needs a libcurl
/// built with WebSocket support, which Debian's is not; then the row says
/// why it has no figure.
struct FoundationEchoClient: EchoClient {
    let name = "FoundationNetworking URLSessionWebSocketTask"

    func roundTrips(url: URL, message: Data, count: Int, window: Int) async throws -> Duration {
        let socket = URLSession(configuration: .ephemeral).webSocketTask(with: url)
        socket.resume()
        defer { socket.cancel(with: .normalClosure, reason: nil) }
        do {
            try await socket.sendPing()
        } catch {
            throw EchoClientError(
                "\(error.localizedDescription) (FoundationNetworking's WebSocket tasks need a libcurl built with "
                    + "WebSocket support, which Debian 12's libcurl 7.88.1 is not)")
        }
        return try await EchoLoop.run(
            message: message, count: count, window: window,
            send: { try await socket.send(.data($0)) },
            receive: {
                guard case .data(let data) = try await socket.receive() else { throw EchoClientError("not binary") }
                return data.count
            })
    }
}
