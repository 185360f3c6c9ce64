import Foundation

/// Reads a server's frames from the bytes as they arrive: a value type fed
/// with `append` and drained with `next()`, so it can be fuzzed and tested
/// without a socket.
///
/// Refused (as §5 requires of a client): a masked frame, reserved bits
/// without a negotiated extension, unknown opcodes, a control frame that is
/// fragmented or longer than 125 bytes, a 64-bit length with its top bit
/// set, and any frame longer than `maximumFrameSize` (close code 1009).
struct WebSocketFrameParser: Sendable {
    let maximumFrameSize: Int
    private var buffer = Data()
    private var consumed = 0

    init(maximumFrameSize: Int) {
        self.maximumFrameSize = maximumFrameSize
    }

    /// Bytes received and not yet part of a returned frame.
    var bufferedCount: Int { buffer.count - consumed }

    mutating func append(_ bytes: Data) {
        if consumed > 0, consumed == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            consumed = 0
        }
        buffer.append(bytes)
    }

    /// The next whole frame, nil when more bytes are needed.
    mutating func next() throws(WebSocketProtocolError) -> WebSocketFrame? {
        let available = buffer.count - consumed
        guard available >= 2 else { return nil }
        let base = buffer.startIndex + consumed
        let first = buffer[base]
        let second = buffer[base + 1]
        guard first & 0x70 == 0 else { throw .protocolError("a frame set reserved bits no extension was agreed for") }
        guard let opcode = WebSocketFrame.Opcode(rawValue: first & 0x0F) else {
            throw .protocolError("unknown opcode \(first & 0x0F)")
        }
        let fin = first & 0x80 != 0
        guard second & 0x80 == 0 else { throw .protocolError("the server masked a frame (servers must not)") }
        var length = UInt64(second & 0x7F)
        var header = 2
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[base + 2]) << 8 | UInt64(buffer[base + 3])
            header = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for index in 0..<8 { length = length << 8 | UInt64(buffer[base + 2 + index]) }
            guard length >> 63 == 0 else { throw .protocolError("a frame length with its most significant bit set") }
            header = 10
        }
        if opcode.isControl {
            guard fin else { throw .protocolError("a fragmented control frame") }
            guard length <= 125 else { throw .protocolError("a control frame longer than 125 bytes") }
        }
        guard length <= UInt64(maximumFrameSize) else {
            throw WebSocketProtocolError(
                closeCode: 1009, reason: "a frame of \(length) bytes, over the maximum message size of \(maximumFrameSize)")
        }
        guard available >= header + Int(length) else { return nil }
        let payloadStart = base + header
        let payload = buffer.subdata(in: payloadStart..<(payloadStart + Int(length)))
        consumed += header + Int(length)
        return WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
    }
}
