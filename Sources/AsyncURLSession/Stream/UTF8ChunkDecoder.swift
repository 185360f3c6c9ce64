/// Decodes UTF-8 that arrives in chunks: a character split between two
/// chunks is held back until its last bytes come, instead of turning into
/// replacement characters. Invalid bytes become U+FFFD, as
/// `String(decoding:as:)` makes them.
struct UTF8ChunkDecoder {
    private var held: [UInt8] = []

    /// The text of every complete sequence so far.
    mutating func decode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var buffer = held
        buffer.append(contentsOf: bytes)
        let split = Self.completePrefixLength(buffer)
        held = Array(buffer[split...])
        return String(decoding: buffer[..<split], as: UTF8.self)
    }

    /// What is left at the end of the input (an unfinished sequence: U+FFFD).
    mutating func finish() -> String {
        defer { held = [] }
        return String(decoding: held, as: UTF8.self)
    }

    /// How many bytes from the start end on a sequence boundary: a lead byte
    /// among the last three whose sequence is longer than what follows it
    /// starts an unfinished sequence.
    static func completePrefixLength(_ bytes: [UInt8]) -> Int {
        var index = bytes.count
        var looked = 0
        while index > 0, looked < 3 {
            index -= 1
            looked += 1
            let byte = bytes[index]
            if byte & 0xC0 == 0x80 { continue }  // a continuation byte: look further back
            let length: Int
            switch byte {
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: return bytes.count  // ASCII or invalid: nothing to wait for
            }
            return bytes.count - index < length ? index : bytes.count
        }
        return bytes.count
    }
}
