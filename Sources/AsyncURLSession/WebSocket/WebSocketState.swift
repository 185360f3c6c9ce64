import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a WebSocket connection keeps besides its raw connection's state
/// (whose phases are `RawConnectionMachine`'s), under the same lock.
struct WebSocketState: Sendable {
    var maximumMessageSize = 1 << 20
    /// The server's answer to the Upgrade request, read so far.
    var handshakeHead = Data()
    var parser = WebSocketFrameParser(maximumFrameSize: 1 << 20)
    var assembler = WebSocketMessageAssembler(maximumMessageSize: 1 << 20)
    /// Messages waiting for `receive()`, and their size.
    var received: [WebSocketMessage] = []
    var receivedBytes = 0
    var receivers: [CheckedContinuation<WebSocketMessage?, any Error>] = []
    var pingWaiters: [CheckedContinuation<Void, any Error>] = []
    var negotiatedProtocol: String?
    var closeCode = WebSocketCloseCode.invalid
    var closeReason: Data?
    /// The server's 101 answer, once open.
    var response: HTTPURLResponse?
    var bytesReceived: Int64 = 0
    /// Accept a 101 without Sec-WebSocket-Accept (see `WebSocketHandshake.validate`).
    var allowsMissingAccept = false

    /// The largest response head we read before refusing the server.
    static let maximumHeadSize = 64 * 1024
}
