import Foundation

/// One Set-Cookie header value, read as RFC 6265bis §5.6 says (the parsing
/// every browser shares): a name-value pair, then attributes, unknown ones
/// ignored, the last of a repeated attribute winning. Pure; nil for a value
/// a browser would ignore as a whole.
struct ParsedSetCookie: Equatable {
    var name: String
    var value: String
    var expires: Date?
    /// Seconds; negative or zero means "already expired".
    var maxAge: Int?
    /// Lowercased, without a leading dot; nil when absent or empty.
    var domain: String?
    /// Only a value that starts with "/"; others are ignored (default path).
    var path: String?
    var secure = false
    var httpOnly = false
    /// "Strict", "Lax" or "None" as sent (other values are dropped).
    var sameSite: String?

    /// RFC 6265bis caps the name and value together, and each attribute value.
    static let maximumNameValueBytes = 4096
    static let maximumAttributeValueBytes = 1024

    static func parse(_ header: String) -> ParsedSetCookie? {
        // A control character other than tab makes the whole value ignored.
        guard !header.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) else {
            return nil
        }
        let pieces = header.split(separator: ";", omittingEmptySubsequences: false)
        guard let pair = pieces.first else { return nil }
        let name: Substring
        let value: Substring
        if let equals = pair.firstIndex(of: "=") {
            name = pair[..<equals]
            value = pair[pair.index(after: equals)...]
        } else {
            name = ""
            value = pair
        }
        let trimmedName = trim(name)
        let trimmedValue = trim(value)
        guard !(trimmedName.isEmpty && trimmedValue.isEmpty),
            trimmedName.utf8.count + trimmedValue.utf8.count <= maximumNameValueBytes
        else { return nil }
        var cookie = ParsedSetCookie(name: String(trimmedName), value: String(trimmedValue))
        for piece in pieces.dropFirst() {
            let attributeName: Substring
            let attributeValue: Substring
            if let equals = piece.firstIndex(of: "=") {
                attributeName = trim(piece[..<equals])
                attributeValue = trim(piece[piece.index(after: equals)...])
            } else {
                attributeName = trim(piece)
                attributeValue = ""
            }
            guard attributeValue.utf8.count <= maximumAttributeValueBytes else { continue }
            cookie.apply(attributeName.lowercased(), String(attributeValue))
        }
        return cookie
    }

    private mutating func apply(_ name: String, _ value: String) {
        switch name {
        case "expires":
            if let date = CookieDate.parse(value) { expires = date }
        case "max-age":
            guard let first = value.first, first == "-" || first.isNumber,
                value.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber })
            else { return }
            // Out of range values saturate instead of being ignored.
            maxAge = Int(value) ?? (first == "-" ? Int.min : Int.max)
        case "domain":
            var domain = value.lowercased()
            if domain.hasPrefix(".") { domain.removeFirst() }
            self.domain = domain.isEmpty ? nil : domain
        case "path":
            path = value.hasPrefix("/") ? value : nil
        case "secure":
            secure = true
        case "httponly":
            httpOnly = true
        case "samesite":
            switch value.lowercased() {
            case "strict": sameSite = "Strict"
            case "lax": sameSite = "Lax"
            case "none": sameSite = "None"
            default: sameSite = nil
            }
        default:
            break
        }
    }

    private static func trim(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
