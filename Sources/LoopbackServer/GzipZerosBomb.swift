import NIOCore

/// A gzip stream (RFC 1952) of many zero bytes, about 159 times smaller
/// than what it decodes to: one deflate block (RFC 1951) with the fixed
/// Huffman codes, a literal 0 and then back-references of 258 bytes at
/// distance 1, 13 bits each. Made without a compression library, for tests
/// of a client's decompression limit. The trailer's CRC is right up to
/// 64 MiB of zeros (a whole, valid stream); past that it is left 0, since a
/// client under test is expected to give up long before the end.
enum GzipZerosBomb {
    static func encode(zeros count: Int) -> ByteBuffer {
        var bits = BitWriter()
        bits.write(1, count: 1)  // BFINAL
        bits.write(1, count: 2)  // BTYPE 01: fixed Huffman codes
        var produced = 0
        if count > 0 {
            bits.writeCode(0x30, length: 8)  // literal 0
            produced = 1
        }
        while count - produced >= 258 {
            bits.writeCode(0xC5, length: 8)  // length code 285: 258 bytes, no extra bits
            bits.writeCode(0, length: 5)  // distance code 0: distance 1
            produced += 258
        }
        while produced < count {
            bits.writeCode(0x30, length: 8)
            produced += 1
        }
        bits.writeCode(0, length: 7)  // end of block (256)
        var output = ByteBuffer()
        output.writeBytes([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff])
        output.writeBytes(bits.finish())
        output.writeInteger(count <= 64 << 20 ? CRC32.checksum(zeros: count) : 0, endianness: .little)
        output.writeInteger(UInt32(truncatingIfNeeded: count), endianness: .little)
        return output
    }
}

/// Packs deflate's bit stream: values least significant bit first, Huffman
/// codes most significant bit first.
private struct BitWriter {
    private var bytes: [UInt8] = []
    private var current: UInt32 = 0
    private var used = 0

    mutating func write(_ value: UInt32, count: Int) {
        for bit in 0..<count {
            current |= ((value >> UInt32(bit)) & 1) << UInt32(used)
            used += 1
            if used == 8 {
                bytes.append(UInt8(current))
                current = 0
                used = 0
            }
        }
    }

    mutating func writeCode(_ code: UInt32, length: Int) {
        var reversed: UInt32 = 0
        for bit in 0..<length { reversed |= ((code >> UInt32(bit)) & 1) << UInt32(length - 1 - bit) }
        write(reversed, count: length)
    }

    mutating func finish() -> [UInt8] {
        if used > 0 { bytes.append(UInt8(current)) }
        return bytes
    }
}
