import Foundation

/// A message or control event made from frames (§5.4, §5.5).
enum WebSocketIncoming: Sendable, Equatable {
    case text(String)
    case binary(Data)
    case ping(Data)
    case pong(Data)
    /// The peer's close frame: its code (nil when it sent none: 1005 to
    /// the user, as Apple reports `noStatusReceived`) and reason.
    case close(code: UInt16?, reason: Data)
}

/// Joins fragments into messages, lets control frames through between
/// them, and checks what RFC 6455 asks a client to check: continuation
/// order, the maximum message size (1009), UTF-8 of text messages and close
/// reasons (1007), and close codes (1002).
struct WebSocketMessageAssembler: Sendable {
    let maximumMessageSize: Int
    private var partialOpcode: WebSocketFrame.Opcode?
    private var partial = Data()

    init(maximumMessageSize: Int) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// What `frame` completes, if anything.
    mutating func receive(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> WebSocketIncoming? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return try Self.close(frame.payload)
        case .text, .binary:
            guard partialOpcode == nil else {
                throw .protocolError("a new message began before the fragmented one ended")
            }
            guard !frame.fin else { return try message(frame.opcode, frame.payload) }
            partialOpcode = frame.opcode
            partial = frame.payload
            return nil
        case .continuation:
            guard let opcode = partialOpcode else { throw .protocolError("a continuation frame with no message to continue") }
            guard partial.count + frame.payload.count <= maximumMessageSize else {
                throw WebSocketProtocolError(
                    closeCode: 1009, reason: "a message over the maximum message size of \(maximumMessageSize) bytes")
            }
            partial.append(frame.payload)
            guard frame.fin else { return nil }
            let whole = partial
            partialOpcode = nil
            partial = Data()
            return try message(opcode, whole)
        }
    }

    private func message(_ opcode: WebSocketFrame.Opcode, _ payload: Data) throws(WebSocketProtocolError) -> WebSocketIncoming {
        guard payload.count <= maximumMessageSize else {
            throw WebSocketProtocolError(
                closeCode: 1009, reason: "a message over the maximum message size of \(maximumMessageSize) bytes")
        }
        guard opcode == .text else { return .binary(payload) }
        guard let text = String(validatingUTF8Data: payload) else {
            throw WebSocketProtocolError(closeCode: 1007, reason: "a text message that is not UTF-8")
        }
        return .text(text)
    }

    private static func close(_ payload: Data) throws(WebSocketProtocolError) -> WebSocketIncoming {
        guard !payload.isEmpty else { return .close(code: nil, reason: Data()) }
        guard payload.count >= 2 else { throw .protocolError("a close frame with a one-byte body") }
        let code = UInt16(payload[payload.startIndex]) << 8 | UInt16(payload[payload.startIndex + 1])
        guard WebSocketCloseCodes.isValidOnTheWire(code) else {
            throw .protocolError("close code \(code), which may not be sent")
        }
        let reason = payload.dropFirst(2)
        guard String(validatingUTF8Data: Data(reason)) != nil else {
            throw WebSocketProtocolError(closeCode: 1007, reason: "a close reason that is not UTF-8")
        }
        return .close(code: code, reason: Data(reason))
    }
}

/// The close codes a frame may carry (§7.4.1, §7.4.2): the defined ones
/// but 1004, 1005, 1006 and 1015 (reserved for reporting), and 3000-4999.
enum WebSocketCloseCodes {
    static func isValidOnTheWire(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011: true
        case 1012...1014: true  // service restart, try again later, bad gateway (IANA registry)
        case 3000...4999: true
        default: false
        }
    }
}

extension String {
    /// Nil unless `data` is valid UTF-8 (Foundation's String(data:encoding:)
    /// repairs some sequences on Linux instead of failing).
    init?(validatingUTF8Data data: Data) {
        var iterator = data.makeIterator()
        var decoder = UTF8()
        var scalars = String.UnicodeScalarView()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput:
                self = String(scalars)
                return
            case .error: return nil
            }
        }
    }
}
