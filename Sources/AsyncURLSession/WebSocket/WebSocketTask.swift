import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A WebSocket connection (RFC 6455 over an HTTP/1.1 Upgrade, ws and wss),
/// as `URLSessionWebSocketTask`, async first.
///
/// ```swift
/// let socket = session.webSocketTask(with: URL(string: "wss://example.com/chat")!, protocols: ["chat"])
/// socket.resume()
/// try await socket.send(.string("hello"))
/// for try await message in socket.messages { print(message) }
/// ```
///
/// libcurl connects (TCP, proxies, TLS verified as every other connection);
/// the framing is this library's own. Every frame sent is masked; text
/// messages are checked to be UTF-8; pings are answered; a message over
/// `maximumMessageSize` closes the connection with 1009. Messages wait in a
/// buffer of 1 MiB for `receive()`; beyond it the socket is not read, so a
/// slow consumer slows the server instead of filling memory.
public final class WebSocketTask: Sendable {
    let connection: WebSocketConnection

    init(connection: WebSocketConnection) {
        self.connection = connection
    }

    public var taskIdentifier: Int { connection.identifier }
    public var originalRequest: URLRequest { connection.request }

    /// The largest message received before the connection closes with
    /// 1009 (`messageTooBig`); 1 MiB by default, as Apple's. Set it before
    /// `resume()`.
    public var maximumMessageSize: Int {
        get { connection.maximumMessageSize }
        set { connection.maximumMessageSize = newValue }
    }

    /// The subprotocol the server chose, once open.
    public var negotiatedProtocol: String? { connection.negotiatedProtocol }
    /// `.invalid` until the connection closes.
    public var closeCode: WebSocketCloseCode { connection.closeCode }
    public var closeReason: Data? { connection.closeReason }
    /// Why the connection failed, if it did.
    public var error: (any Error)? { connection.error }
    /// The server's 101 Switching Protocols, once open.
    public var response: HTTPURLResponse? { connection.response }
    /// Bytes read from the connection (the handshake's answer included).
    public var countOfBytesReceived: Int64 { connection.countOfBytesReceived }
    /// Bytes handed to the connection (the Upgrade request included).
    public var countOfBytesSent: Int64 { connection.countOfBytesSent }

    /// Answers the TLS challenges of a wss connection (server trust, and a
    /// client certificate when the server asks for one and none is
    /// configured), as a task's handler does: each new TLS connection stops
    /// in its handshake for the decision, which costs one more handshake.
    /// Nil (the default): default verification. Set it before `resume()`.
    public var challengeHandler: (@Sendable (ChallengeDecision) async -> Void)? {
        get { connection.tlsChallenges.handler }
        set { connection.tlsChallenges.handler = newValue }
    }

    /// `observer` hears the opening and the end, once each, on the thread
    /// that saw them (hand work off; the classic adapter turns them into its
    /// delegate calls). Set it before `resume()`.
    public func observeLifecycle(_ observer: @escaping @Sendable (WebSocketLifecycleEvent) -> Void) {
        connection.observe(observer)
    }

    /// For the classic adapter, as FoundationNetworking: a 101 without
    /// Sec-WebSocket-Accept is accepted (a wrong one is still refused).
    /// Before `resume()`.
    @_spi(Adapters) public func allowMissingAcceptField() { connection.allowMissingAcceptField() }

    /// Resumed and not ended yet.
    package var isRunning: Bool { connection.isRunning }
    /// Our close frame is sent; the server's answer or the end is awaited.
    public var isClosing: Bool { connection.isClosing }

    /// Connects and opens the WebSocket.
    public func resume() { connection.resume() }

    /// Sends a message; returns once it is queued for the connection, or,
    /// while more than 256 KiB wait to be written, once the socket took
    /// enough of them. A failure after that shows in the next call.
    public func send(_ message: WebSocketMessage) async throws {
        switch message {
        case .string(let text): try await connection.send(WebSocketFrame(opcode: .text, payload: Data(text.utf8)))
        case .data(let data): try await connection.send(WebSocketFrame(opcode: .binary, payload: data))
        }
    }

    /// The next message. Throws once the connection closed (the error says
    /// why; after a clean close, `URLError(.networkConnectionLost)` naming
    /// the close code).
    public func receive() async throws -> WebSocketMessage {
        if let message = try await connection.receive() { return message }
        throw URLError.make(
            .networkConnectionLost, url: originalRequest.url?.absoluteString,
            reason: "The WebSocket was closed (code \(closeCode.rawValue)).")
    }

    /// Messages as they arrive; ends after a clean close, throws after a failure.
    public var messages: AsyncThrowingStream<WebSocketMessage, any Error> {
        let connection = connection
        return AsyncThrowingStream {
            try await connection.receive()
        }
    }

    /// Sends a ping and returns when its pong arrives.
    public func sendPing() async throws { try await connection.sendPing() }

    /// Closes the connection with a close frame (`code`, `reason`).
    public func cancel(with closeCode: WebSocketCloseCode, reason: Data?) {
        connection.close(code: closeCode, reason: reason)
    }

    /// Closes the connection (1001, going away), as URLSessionTask.cancel().
    public func cancel() { connection.close(code: .goingAway, reason: nil) }
}
