extension String {
    /// Equality ignoring ASCII case, byte by byte. Header names are ASCII
    /// tokens; Foundation's caseInsensitiveCompare goes through NSString and
    /// Unicode folding and cost about 12% of a small request's CPU.
    package func equalsIgnoringASCIICase(_ other: String) -> Bool {
        let lhs = utf8
        let rhs = other.utf8
        guard lhs.count == rhs.count else { return false }
        for (a, b) in zip(lhs, rhs) where a != b {
            guard a | 0x20 == b | 0x20, (a | 0x20) >= UInt8(ascii: "a"), (a | 0x20) <= UInt8(ascii: "z") else {
                return false
            }
        }
        return true
    }

    package func hasPrefixIgnoringASCIICase(_ prefix: String) -> Bool {
        guard utf8.count >= prefix.utf8.count else { return false }
        return String(utf8.prefix(prefix.utf8.count))!.equalsIgnoringASCIICase(prefix)
    }
}
