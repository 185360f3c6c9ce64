import Foundation

/// Writes client frames: every one masked with a fresh key (§5.3), since a
/// server must refuse unmasked frames and the mask keeps intermediaries
/// from reading client bytes as requests of their own.
enum WebSocketFrameEncoder {
    static func encode(_ frame: WebSocketFrame, maskingKey: UInt32 = UInt32.random(in: .min ... .max)) -> Data {
        let count = frame.payload.count
        var out = Data(capacity: count + 14)
        out.append((frame.fin ? 0x80 : 0) | frame.opcode.rawValue)
        if count < 126 {
            out.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            out.append(0x80 | 126)
            out.append(UInt8(count >> 8))
            out.append(UInt8(count & 0xFF))
        } else {
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((UInt64(count) >> UInt64(shift)) & 0xFF)) }
        }
        let key = [UInt8(maskingKey >> 24), UInt8((maskingKey >> 16) & 0xFF), UInt8((maskingKey >> 8) & 0xFF),
                   UInt8(maskingKey & 0xFF)]
        out.append(contentsOf: key)
        let start = out.count
        out.append(frame.payload)
        out.withUnsafeMutableBytes { bytes in
            for index in 0..<count { bytes[start + index] ^= key[index & 3] }
        }
        return out
    }

    /// A close frame's payload: the code, then the reason (UTF-8), cut to
    /// fit the 125 bytes of a control frame.
    static func closePayload(code: UInt16, reason: Data) -> Data {
        var payload = Data([UInt8(code >> 8), UInt8(code & 0xFF)])
        payload.append(reason.prefix(123))
        return payload
    }
}
