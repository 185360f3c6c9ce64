/// Lower-case hex, as Digest authentication and /echo's SHA-256 use it.
enum Hex {
    static func string<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var result = ""
        for byte in bytes {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0F)])
        }
        return result
    }

    /// The bytes an even-length hex string spells (either case), nil for anything else.
    static func bytes(_ text: String) -> [UInt8]? {
        let values = text.utf8.map(value)
        guard values.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.count / 2)
        var index = 0
        while index < values.count {
            guard let high = values[index], let low = values[index + 1] else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// The value of one hex digit, nil if `byte` is not one.
    static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static let digits = Array("0123456789abcdef")
}
