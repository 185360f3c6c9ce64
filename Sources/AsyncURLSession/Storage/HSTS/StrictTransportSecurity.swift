import Foundation

/// A `Strict-Transport-Security` field value (RFC 6797 §6.1): `max-age`
/// (required, delta-seconds, possibly quoted) and `includeSubDomains`.
/// Directive names are case-insensitive; a directive given twice, or a
/// missing or malformed max-age, makes the whole value invalid (§6.1:
/// the UA ignores it); unknown directives are ignored.
struct StrictTransportSecurity: Equatable, Sendable {
    var maxAge: Int64
    var includeSubDomains: Bool

    /// Caps max-age so that now + max-age stays a representable date.
    static let longestMaxAge: Int64 = 10 * 365 * 24 * 3600 * 100

    init?(_ value: String) {
        var maxAge: Int64?
        var includeSubDomains = false
        var seen = Set<String>()
        for directive in value.split(separator: ";", omittingEmptySubsequences: false) {
            let trimmed = directive.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            let parts = trimmed.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
            guard seen.insert(name).inserted else { return nil }
            switch name {
            case "max-age":
                guard parts.count == 2 else { return nil }
                var number = parts[1].trimmingCharacters(in: .whitespaces)
                if number.count >= 2, number.hasPrefix("\""), number.hasSuffix("\"") {
                    number = String(number.dropFirst().dropLast())
                }
                guard !number.isEmpty, number.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
                // Digits beyond Int64 are a very long time: the cap.
                maxAge = min(Int64(number) ?? Self.longestMaxAge, Self.longestMaxAge)
            case "includesubdomains":
                guard parts.count == 1 else { return nil }
                includeSubDomains = true
            default:
                continue
            }
        }
        guard let maxAge else { return nil }
        self.maxAge = maxAge
        self.includeSubDomains = includeSubDomains
    }
}
