import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a WebSocket connection keeps besides its raw connection's state
/// (whose phases are `RawConnectionMachine`'s), under the same lock.
struct WebSocketState: Sendable {
    private(set) var maximumMessageSize = 1 << 20
    /// The server's answer to the Upgrade request, read so far.
    private var handshakeHead = Data()
    private var parser = WebSocketFrameParser(maximumFrameSize: 1 << 20)
    private var assembler = WebSocketMessageAssembler(maximumMessageSize: 1 << 20)
    /// Messages waiting for `receive()`, and their size.
    private var received: [WebSocketMessage] = []
    private(set) var receivedBytes = 0
    private var receivers: [CheckedContinuation<WebSocketMessage?, any Error>] = []
    private var pingWaiters: [CheckedContinuation<Void, any Error>] = []
    private(set) var negotiatedProtocol: String?
    private(set) var closeCode = WebSocketCloseCode.invalid
    private(set) var closeReason: Data?
    /// The server's 101 answer, once open.
    private(set) var response: HTTPURLResponse?
    private(set) var bytesReceived: Int64 = 0
    /// Accept a 101 without Sec-WebSocket-Accept (see `WebSocketHandshake.validate`).
    private(set) var allowsMissingAccept = false

    /// The largest response head we read before refusing the server.
    static let maximumHeadSize = 64 * 1024

    // MARK: - Settings (before the connection opens)

    /// The largest message (and frame) accepted, at least 1.
    mutating func setMaximumMessageSize(_ size: Int) {
        maximumMessageSize = max(1, size)
    }

    mutating func allowMissingAccept() {
        allowsMissingAccept = true
    }

    /// A connection starts: framing starts afresh at the current limit.
    mutating func prepareForConnection() {
        parser = WebSocketFrameParser(maximumFrameSize: maximumMessageSize)
        assembler = WebSocketMessageAssembler(maximumMessageSize: maximumMessageSize)
    }

    // MARK: - Reading

    /// What the bytes of the handshake answer read so far make.
    enum HandshakeRead {
        /// The head is not whole yet; `tooLarge` when it outgrew the limit.
        case incomplete(tooLarge: Bool)
        /// The whole head (without its blank line), and what came after it.
        case complete(head: Data, rest: Data)
    }

    /// Every byte received counts, handshake and frames.
    mutating func count(_ bytes: Int) {
        bytesReceived += Int64(bytes)
    }

    /// Bytes of the server's handshake answer.
    mutating func readHandshake(_ bytes: UnsafeRawBufferPointer) -> HandshakeRead {
        handshakeHead.append(contentsOf: bytes)
        let head = handshakeHead
        guard let end = head.firstRange(of: Data("\r\n\r\n".utf8)) else {
            return .incomplete(tooLarge: head.count > Self.maximumHeadSize)
        }
        handshakeHead = Data()
        return .complete(head: head.subdata(in: head.startIndex..<end.lowerBound), rest: head.subdata(in: end.upperBound..<head.endIndex))
    }

    /// The handshake succeeded: the protocol the server chose, its 101.
    mutating func opened(protocol chosen: String?, response: HTTPURLResponse?) {
        negotiatedProtocol = chosen
        self.response = response
    }

    /// Frame bytes, parsed by `nextIncoming()`.
    mutating func appendFrames(_ data: Data) {
        parser.append(data)
    }

    /// The next whole message or control frame the bytes so far make.
    mutating func nextIncoming() throws(WebSocketProtocolError) -> WebSocketIncoming? {
        while let frame = try parser.next() {
            if let incoming = try assembler.receive(frame) { return incoming }
        }
        return nil
    }

    /// A message arrived: the waiting `receive()` to resume with it, else
    /// it waits (counted against the buffer limit).
    mutating func deliver(_ message: WebSocketMessage) -> CheckedContinuation<WebSocketMessage?, any Error>? {
        if !receivers.isEmpty { return receivers.removeFirst() }
        received.append(message)
        receivedBytes += WebSocketClient.size(of: message)
        return nil
    }

    /// A pong arrived: the oldest ping waiting for one.
    mutating func pongArrived() -> CheckedContinuation<Void, any Error>? {
        pingWaiters.isEmpty ? nil : pingWaiters.removeFirst()
    }

    // MARK: - The caller's side

    /// `sendPing()`: waits for the pong.
    mutating func waitForPong(_ continuation: CheckedContinuation<Void, any Error>) {
        pingWaiters.append(continuation)
    }

    /// The oldest waiting message, if any.
    mutating func takeMessage() -> WebSocketMessage? {
        guard !received.isEmpty else { return nil }
        let message = received.removeFirst()
        receivedBytes -= WebSocketClient.size(of: message)
        return message
    }

    /// `receive()` waits for the next message.
    mutating func waitForMessage(_ continuation: CheckedContinuation<WebSocketMessage?, any Error>) {
        receivers.append(continuation)
    }

    // MARK: - Closing

    /// A close code and reason: the first one stays (after our close, the
    /// server's echo does not replace what we sent).
    mutating func recordClose(code: WebSocketCloseCode, reason: Data?) {
        guard closeCode == .invalid else { return }
        closeCode = code
        closeReason = reason
    }

    /// The connection ends: every waiting `receive()` and ping, to answer.
    mutating func takeWaitersAtEnd() -> (
        receivers: [CheckedContinuation<WebSocketMessage?, any Error>], pingWaiters: [CheckedContinuation<Void, any Error>]
    ) {
        defer {
            receivers = []
            pingWaiters = []
        }
        return (receivers, pingWaiters)
    }
}
