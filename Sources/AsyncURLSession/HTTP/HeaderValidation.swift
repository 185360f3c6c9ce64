/// RFC 9110 rules for what may appear in a request's method and header fields.
enum HeaderValidation {
    /// tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
    ///         "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
    static func isToken(_ text: String) -> Bool {
        guard !text.isEmpty else { return false }
        return text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }

    /// Why this header must not be sent, or nil when it is fine. Values may
    /// hold any byte but CR, LF and NUL (which would split or end the header).
    static func problem(name: String, value: String) -> String? {
        guard isToken(name) else {
            return "The header name '\(name.debugDescription)' is not a valid token (RFC 9110 §5.1); "
                + "the request was not sent."
        }
        if value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            return "The value of header '\(name)' contains CR, LF or NUL; the request was not sent."
        }
        return nil
    }
}
