extension String {
    /// Equality ignoring ASCII case, byte by byte. Header names are ASCII
    /// tokens; Foundation's caseInsensitiveCompare goes through NSString and
    /// Unicode folding and cost about 12% of a small request's CPU.
    package func equalsIgnoringASCIICase(_ other: String) -> Bool {
        let lhs = utf8
        let rhs = other.utf8
        guard lhs.count == rhs.count else { return false }
        // Native strings are contiguous: compare buffers, not two UTF8View
        // iterators (zip over the views showed up on the engine thread).
        if let result = lhs.withContiguousStorageIfAvailable({ left in
            rhs.withContiguousStorageIfAvailable { right in Self.equalFolded(left, right) }
        }), let result {
            return result
        }
        for (a, b) in zip(lhs, rhs) where a != b {
            guard Self.sameLetter(a, b) else { return false }
        }
        return true
    }

    private static func equalFolded(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        for index in 0..<left.count where left[index] != right[index] {
            guard sameLetter(left[index], right[index]) else { return false }
        }
        return true
    }

    /// Two different bytes that are the same ASCII letter in different cases.
    private static func sameLetter(_ a: UInt8, _ b: UInt8) -> Bool {
        a | 0x20 == b | 0x20 && (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z")
    }

    /// Whether `needle` (lowercase ASCII) occurs anywhere, ASCII case
    /// ignored. For directive tokens such as "no-store" in a header value:
    /// Foundation's `lowercased().contains` builds a copy and searches
    /// through CFString (about 1 µs a response on the engine thread).
    package func containsIgnoringASCIICase(_ needle: StaticString) -> Bool {
        let pattern = UnsafeBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
        guard !pattern.isEmpty else { return true }
        var text = self
        return text.withUTF8 { bytes in
            guard bytes.count >= pattern.count else { return false }
            for start in 0...(bytes.count - pattern.count) {
                var index = 0
                while index < pattern.count, bytes[start + index].asciiLowercased == pattern[index] {
                    index += 1
                }
                if index == pattern.count { return true }
            }
            return false
        }
    }

    /// Byte by byte from the start, without building the prefix as a String
    /// first (that copy cost more than the comparison on a URL per request).
    package func hasPrefixIgnoringASCIICase(_ prefix: String) -> Bool {
        var bytes = utf8.makeIterator()
        for expected in prefix.utf8 {
            guard let byte = bytes.next(), byte == expected || Self.sameLetter(byte, expected) else { return false }
        }
        return true
    }
}

extension UInt8 {
    /// An uppercase ASCII letter lowercased; any other byte as it is.
    package var asciiLowercased: UInt8 {
        self >= UInt8(ascii: "A") && self <= UInt8(ascii: "Z") ? self | 0x20 : self
    }
}

extension UnsafeRawBufferPointer {
    /// Whether these bytes are `lowercase` (lowercase ASCII), ASCII case
    /// ignored: header names matched where they lie, with no String made.
    package func equalsIgnoringASCIICase(_ lowercase: StaticString) -> Bool {
        guard count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for index in 0..<count where self[index].asciiLowercased != expected[index] { return false }
        return true
    }
}
