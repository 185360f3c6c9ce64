import Foundation

/// Where a WebSocket connection is, as a value with explicit transitions:
/// the connection object holds one under its lock and acts on what each
/// transition returns.
enum WebSocketState: Sendable {
    /// Made, not resumed.
    case idle
    /// libcurl connects (TCP, proxy tunnel, TLS).
    case connecting
    /// The Upgrade request is sent; the server's head is read into `head`.
    case handshaking(head: Data)
    case open
    /// We sent a close frame and wait for the server's (or the end).
    case closing
    case closed

    var isOpen: Bool {
        if case .open = self { return true }
        return false
    }

    var isClosed: Bool {
        if case .closed = self { return true }
        return false
    }

    /// The largest response head we read before refusing the server.
    static let maximumHeadSize = 64 * 1024
}
