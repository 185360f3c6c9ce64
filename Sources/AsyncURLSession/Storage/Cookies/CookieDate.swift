import Foundation

/// The cookie-date algorithm of RFC 6265 §5.1.1: how browsers read an
/// Expires attribute, whatever its format (RFC 1123, RFC 850, asctime and
/// the many variants servers send). Pure; nil when no date can be found.
enum CookieDate {
    static func parse(_ text: String) -> Date? {
        var time: (Int, Int, Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in tokens(text) {
            if time == nil, let found = parseTime(token) {
                time = found
            } else if day == nil, let found = leadingDigits(token, minimum: 1, maximum: 2), found.rest.allSatisfy({ !$0.isNumber }) {
                day = found.value
            } else if month == nil, let found = parseMonth(token) {
                month = found
            } else if year == nil, let found = leadingDigits(token, minimum: 2, maximum: 4), found.rest.allSatisfy({ !$0.isNumber }) {
                year = found.value
            }
        }
        guard var year, let day, let month, let (hour, minute, second) = time else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, hour <= 23, minute <= 59, second <= 59 else { return nil }
        var components = DateComponents()
        components.calendar = Calendar(identifier: .gregorian)
        components.timeZone = TimeZone(identifier: "UTC")
        components.year = year
        components.month = month
        components.day = day
        components.hour = hour
        components.minute = minute
        components.second = second
        guard components.isValidDate, let date = components.date else { return nil }
        return date
    }

    /// Splits at the delimiters of §5.1.1 (everything but digits, letters
    /// and ":" among the ASCII characters in use).
    private static func tokens(_ text: String) -> [Substring] {
        text.split { character in
            guard let ascii = character.asciiValue else { return false }
            switch ascii {
            case 0x09, 0x20...0x2F, 0x3B...0x40, 0x5B...0x60, 0x7B...0x7E: return true
            default: return false
            }
        }
    }

    /// 1*2DIGIT ":" 1*2DIGIT ":" 1*2DIGIT, maybe followed by non-digits.
    private static func parseTime(_ token: Substring) -> (Int, Int, Int)? {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let hour = leadingDigits(parts[0], minimum: 1, maximum: 2), hour.rest.isEmpty,
            let minute = leadingDigits(parts[1], minimum: 1, maximum: 2), minute.rest.isEmpty,
            let second = leadingDigits(parts[2], minimum: 1, maximum: 2), second.rest.allSatisfy({ !$0.isNumber })
        else { return nil }
        return (hour.value, minute.value, second.value)
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func parseMonth(_ token: Substring) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = token.prefix(3).lowercased()
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }

    /// `minimum` to `maximum` leading ASCII digits, and what follows them.
    private static func leadingDigits(
        _ token: Substring, minimum: Int, maximum: Int
    ) -> (value: Int, rest: Substring)? {
        let digits = token.prefix { $0.isASCII && $0.isNumber }
        guard digits.count >= minimum, digits.count <= maximum, let value = Int(digits) else { return nil }
        return (value, token.dropFirst(digits.count))
    }
}
