import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The challenges of a `WWW-Authenticate` or `Proxy-Authenticate` field
/// (RFC 9110 §11.6.1): `Digest realm="a", nonce="b", Basic realm="c"` holds
/// two. Only the scheme and realm matter to us: libcurl computes the answers.
struct AuthenticationChallenge: Equatable, Sendable {
    var scheme: String
    var realm: String?

    /// URLProtectionSpace's name for the scheme, or nil for schemes we cannot answer.
    var authenticationMethod: String? {
        switch scheme.lowercased() {
        case "basic": return NSURLAuthenticationMethodHTTPBasic
        case "digest": return NSURLAuthenticationMethodHTTPDigest
        case "ntlm": return NSURLAuthenticationMethodNTLM
        case "negotiate": return NSURLAuthenticationMethodNegotiate
        default: return nil
        }
    }

    /// Parses every challenge in the field values, in order. Malformed input
    /// gives fewer challenges, never a crash.
    static func parse(_ values: [String]) -> [AuthenticationChallenge] {
        var challenges: [AuthenticationChallenge] = []
        for value in values {
            for item in splitOutsideQuotes(value) {
                let trimmed = item.trimmingCharacters(in: .whitespaces)
                guard !trimmed.isEmpty else { continue }
                let (first, rest) = splitFirstToken(trimmed)
                if rest.first != "=" && HeaderValidation.isToken(first) {
                    // "Scheme" or "Scheme param=..." starts a new challenge.
                    challenges.append(AuthenticationChallenge(scheme: first, realm: nil))
                    let parameter = rest.trimmingCharacters(in: .whitespaces)
                    if !parameter.isEmpty { apply(parameter, to: &challenges) }
                } else {
                    apply(trimmed, to: &challenges)
                }
            }
        }
        return challenges
    }

    private static func apply(_ parameter: String, to challenges: inout [AuthenticationChallenge]) {
        guard !challenges.isEmpty, let equals = parameter.firstIndex(of: "=") else { return }
        let name = parameter[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
        var value = parameter[parameter.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
            value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
        }
        if name == "realm" { challenges[challenges.count - 1].realm = value }
    }

    private static func splitFirstToken(_ text: String) -> (String, Substring) {
        let end = text.firstIndex(where: { $0 == " " || $0 == "=" }) ?? text.endIndex
        return (String(text[..<end]), text[end...])
    }

    /// Splits on commas that are not inside a quoted string.
    private static func splitOutsideQuotes(_ text: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        for character in text {
            if escaped {
                current.append(character)
                escaped = false
                continue
            }
            switch character {
            case "\\" where inQuotes:
                escaped = true
                current.append(character)
            case "\"":
                inQuotes.toggle()
                current.append(character)
            case "," where !inQuotes:
                parts.append(current)
                current = ""
            default:
                current.append(character)
            }
        }
        parts.append(current)
        return parts
    }
}
