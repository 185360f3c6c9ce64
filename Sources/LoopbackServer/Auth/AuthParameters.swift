/// The parts of an Authorization header: its scheme, then either auth-params
/// (`name=token` or `name="quoted string"`, comma separated) or a token68 (Basic's base64).
/// RFC 9110 section 11.
///
/// Parsing never fails hard: whatever a client sends (a scheme that is not a token, params
/// that do not parse), the route answers 401 at worst.
struct AuthorizationHeader {
    /// As sent; compare case-insensitively.
    let scheme: Substring
    /// What follows the scheme, trimmed.
    let rest: Substring

    init?(_ value: String) {
        let trimmed = value.drop { $0 == " " || $0 == "\t" }
        let end = trimmed.firstIndex { $0 == " " || $0 == "\t" } ?? trimmed.endIndex
        scheme = trimmed[..<end]
        guard HTTPSyntax.isToken(scheme) else { return nil }
        var rest = trimmed[end...].drop { $0 == " " || $0 == "\t" }
        while rest.last == " " || rest.last == "\t" { rest = rest.dropLast() }
        self.rest = rest
    }

    func hasScheme(_ name: String) -> Bool {
        scheme.lowercased() == name.lowercased()
    }

    /// The auth-params by lower-cased name, quoted values unescaped; nil if they do not parse.
    /// A repeated name keeps its first value.
    var parameters: [String: String]? {
        var scanner = ParameterScanner(Array(rest.unicodeScalars))
        var result: [String: String] = [:]
        while true {
            scanner.skip { $0 == " " || $0 == "\t" || $0 == "," }
            guard !scanner.isAtEnd else { return result }
            let name = scanner.take { $0 != "=" && $0 != " " && $0 != "\t" && $0 != "," }
            scanner.skip { $0 == " " || $0 == "\t" }
            guard !name.isEmpty, scanner.consume("=") else { return nil }
            scanner.skip { $0 == " " || $0 == "\t" }
            let value: String
            if scanner.consume("\"") {
                guard let quoted = scanner.quotedStringRest() else { return nil }
                value = quoted
            } else {
                value = scanner.take { $0 != "," && $0 != " " && $0 != "\t" }
            }
            let key = name.lowercased()
            if result[key] == nil {
                result[key] = value
            }
        }
    }

    /// `text` as an RFC 9110 quoted-string, quotes included.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for character in text {
            if character == "\"" || character == "\\" {
                result.append("\\")
            }
            result.append(character)
        }
        return result + "\""
    }
}

/// Walks unicode scalars for AuthorizationHeader.parameters.
private struct ParameterScanner {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    var isAtEnd: Bool { index >= scalars.count }

    mutating func skip(while predicate: (Unicode.Scalar) -> Bool) {
        while !isAtEnd, predicate(scalars[index]) { index += 1 }
    }

    mutating func take(while predicate: (Unicode.Scalar) -> Bool) -> String {
        var result = String.UnicodeScalarView()
        while !isAtEnd, predicate(scalars[index]) {
            result.append(scalars[index])
            index += 1
        }
        return String(result)
    }

    mutating func consume(_ scalar: Unicode.Scalar) -> Bool {
        guard !isAtEnd, scalars[index] == scalar else { return false }
        index += 1
        return true
    }

    /// After an opening quote: the unescaped contents up to the closing quote, which is
    /// consumed; nil if there is none.
    mutating func quotedStringRest() -> String? {
        var result = String.UnicodeScalarView()
        while !isAtEnd {
            let scalar = scalars[index]
            index += 1
            switch scalar {
            case "\"":
                return String(result)
            case "\\":
                guard !isAtEnd else { return nil }
                result.append(scalars[index])
                index += 1
            default:
                result.append(scalar)
            }
        }
        return nil
    }
}
