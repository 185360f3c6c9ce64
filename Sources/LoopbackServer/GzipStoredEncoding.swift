import NIOCore

/// Wraps bytes in a gzip stream (RFC 1952) whose deflate data (RFC 1951)
/// uses stored blocks only: a valid encoding any decoder accepts, made
/// without a compression library. The encoded body is a little longer than
/// the decoded one (5 bytes per 65,535 plus 18), which is what the tests of
/// content decoding need: a Content-Length that is not the decoded length.
enum GzipStoredEncoding {
    static func encode(_ input: [UInt8]) -> ByteBuffer {
        var output = ByteBuffer()
        output.reserveCapacity(input.count + input.count / 65_535 * 5 + 32)
        // ID1 ID2, CM = deflate, no flags, no modification time, no extra flags, OS unknown.
        output.writeBytes([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff])
        var offset = 0
        repeat {
            let length = min(65_535, input.count - offset)
            let isFinal = offset + length == input.count
            // BFINAL in bit 0, BTYPE 00 (stored); the rest of the byte is padding.
            output.writeInteger(UInt8(isFinal ? 1 : 0))
            output.writeInteger(UInt16(length), endianness: .little)
            output.writeInteger(~UInt16(length), endianness: .little)
            output.writeBytes(input[offset..<(offset + length)])
            offset += length
        } while offset < input.count
        output.writeInteger(CRC32.checksum(input), endianness: .little)
        output.writeInteger(UInt32(truncatingIfNeeded: input.count), endianness: .little)
        return output
    }
}

/// The CRC-32 of gzip's trailer (IEEE 802.3, reflected, polynomial 0xEDB88320).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// The checksum of `count` zero bytes, without making them.
    static func checksum(zeros count: Int) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for _ in 0..<count { crc = table[Int(crc & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }
}
