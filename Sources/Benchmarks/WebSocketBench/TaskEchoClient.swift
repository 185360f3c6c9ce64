import Foundation

/// A URLSession-shaped WebSocket task: AsyncURLSession's core `WebSocketTask`,
/// its classic adapter's `URLSessionWebSocketTask` and FoundationNetworking's.
/// The three share their method names but no type; these requirements are
/// those names, so one client (`TaskEchoClient`) drives each of them.
protocol EchoSocket {
    associatedtype Message: EchoMessage
    associatedtype CloseCode: EchoCloseCode
    func resume()
    func sendPing() async throws
    func send(_ message: Message) async throws
    func receive() async throws -> Message
    func cancel(with closeCode: CloseCode, reason: Data?)
}

/// A task's message type: the echo sends and expects binary messages.
protocol EchoMessage {
    static func data(_ data: Data) -> Self
    /// The bytes of a binary message; nil for a text one.
    var binary: Data? { get }
}

/// A task's close code type: the echo closes normally.
protocol EchoCloseCode {
    static var normalClosure: Self { get }
}

/// The round trips through one of the URLSession-shaped tasks: open it with a
/// ping before the clock starts, run the loop, close normally.
struct TaskEchoClient<Socket: EchoSocket>: EchoClient {
    let name: String
    /// Said beside the error when the socket does not open: why this client
    /// may not be able to open one on this machine. Nil: the error as it is.
    var openFailureNote: String?
    let makeSocket: @Sendable (URL) -> Socket

    func roundTrips(url: URL, message: Data, count: Int, window: Int) async throws -> Duration {
        let socket = makeSocket(url)
        socket.resume()
        defer { socket.cancel(with: .normalClosure, reason: nil) }
        do {
            try await socket.sendPing()  // open before the clock starts
        } catch {
            guard let openFailureNote else { throw error }
            throw EchoClientError("\(error.localizedDescription) (\(openFailureNote))")
        }
        return try await EchoLoop.run(
            message: message, count: count, window: window,
            send: { try await socket.send(.data($0)) },
            receive: {
                guard let data = try await socket.receive().binary else { throw EchoClientError("not binary") }
                return data.count
            })
    }
}
