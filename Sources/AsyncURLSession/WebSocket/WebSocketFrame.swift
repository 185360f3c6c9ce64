import Foundation

/// One RFC 6455 frame (§5.2), as read from or written to the wire.
struct WebSocketFrame: Sendable, Equatable {
    enum Opcode: UInt8, Sendable {
        case continuation = 0x0
        case text = 0x1
        case binary = 0x2
        case close = 0x8
        case ping = 0x9
        case pong = 0xA

        /// Close, ping and pong: at most 125 bytes, never fragmented (§5.5).
        var isControl: Bool { rawValue & 0x8 != 0 }
    }

    var fin: Bool
    var opcode: Opcode
    var payload: Data

    init(fin: Bool = true, opcode: Opcode, payload: Data = Data()) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }
}

/// Why a peer's bytes broke the protocol, with the close code the client
/// sends before it drops the connection (§7.4.1).
struct WebSocketProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    var closeCode: UInt16
    var reason: String

    static func protocolError(_ reason: String) -> WebSocketProtocolError {
        WebSocketProtocolError(closeCode: 1002, reason: reason)
    }

    var description: String { "WebSocket protocol error (\(closeCode)): \(reason)" }
}
