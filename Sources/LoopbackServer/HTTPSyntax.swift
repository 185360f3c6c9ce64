/// RFC 9110 syntax checks shared by routes that build headers from query values.
enum HTTPSyntax {
    /// A non-empty run of token characters (header names, cookie names, auth schemes).
    static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    /// Whether NIO's encoder will send `value` as a header value: no CR, LF or NUL (which it
    /// refuses by failing the whole connection).
    static func isSendableHeaderValue(_ value: some StringProtocol) -> Bool {
        !value.contains { $0 == "\r" || $0 == "\n" || $0 == "\0" }
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
