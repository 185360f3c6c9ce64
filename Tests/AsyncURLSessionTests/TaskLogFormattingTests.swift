@testable import AsyncURLSession
import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Testing

/// TaskLog builds its lines from bytes (ASCII case folding, integer
/// milliseconds) for speed; these hold it to the String-based rules it
/// replaced, written out below as the reference: same text, same redaction.
@Suite struct TaskLogFormattingTests {
    // MARK: Reference (the String-based rules)

    private static func referenceRedacted(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<schemeEnd.upperBound]) + "<redacted>" + String(rest[at...])
    }

    private static func referenceSensitive(_ name: String, _ configuration: SessionConfiguration) -> Bool {
        let lowercased = name.lowercased()
        return ["authorization", "proxy-authorization", "cookie", "set-cookie"].contains(lowercased)
            || configuration.sensitiveHeaderNames.contains(lowercased)
    }

    private static func referenceRedacted(
        _ headers: [(name: String, value: String)], _ configuration: SessionConfiguration
    ) -> String {
        headers.map { name, value in
            "\(name): \(referenceSensitive(name, configuration) ? "<redacted>" : value)"
        }.joined(separator: "; ")
    }

    private static func log(extraSensitive: Set<String> = []) -> (TaskLog, SessionConfiguration) {
        var configuration = testConfiguration()
        configuration.logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        configuration.sensitiveHeaderNames = extraSensitive
        return (TaskLog(configuration: configuration)!, configuration)
    }

    // MARK: Tests

    @Test(arguments: [
        "http://127.0.0.1:8080/a/b?c=d#e", "http://ann:pw@host/path", "http://ann@host", "https://host/p@th",
        "http://a@b@c/x?y@z", "http://host?x=@y", "http://host#@frag", "http://u:p@host?q", "http://u:p@host#f",
        "mailto:ann@example.com", "http://[::1]:80/", "://@", "://", "", ":/", "http:/ann:pw@host/",
        "http:://u:p@h/", "ftp://u:p@h:21", "http://user:p%40ss@host/",
        // Not ASCII: the Character rules apply as they are.
        "http://ü:pw@h/", "http://u:p@h/\u{301}", "http://u/\u{301}x:pw@h/", "http:/\u{301}/u:p@h",
        "http://u:p@h\u{301}/", "http://u:p@\u{301}h/", "http://ü@h", "http://h/ü@x",
    ])
    func urlRedaction_matchesTheCharacterRules(_ url: String) {
        #expect(TaskLog.redacted(url) == Self.referenceRedacted(url))
    }

    @Test func urlRedaction_ofAURL() {
        #expect(TaskLog.redacted(URL(string: "http://ann:secret@127.0.0.1:1/x")) == "http://<redacted>@127.0.0.1:1/x")
        #expect(TaskLog.redacted(nil as URL?) == "-")
    }

    @Test(arguments: [Set<String>(), ["X-Api-Key", "X-Schlüssel", "Te\u{212A}en"]])
    func headerRedaction_matchesLowercasedLookups(_ extra: Set<String>) {
        let (log, configuration) = Self.log(extraSensitive: extra)
        let names = [
            "Authorization", "AUTHORIZATION", "authorization", "Proxy-Authorization", "proxy-AUTHORIZATION",
            "Cookie", "COOKIE", "Set-Cookie", "set-cookie", "Cookie2", "Cookies", "Set-Cookie2", "Authorizatio",
            "Accept", "Host", "User-Agent", "Content-Length", "X-Api-Key", "x-api-key", "X-API-KEY", "X-Api-Key2",
            "X-Schlüssel", "X-SCHLÜSSEL", "x-schlüssel", "Tek", "TEK", "Te\u{212A}en", "teken", "Teken",
            // The Kelvin sign lowercases to ASCII "k": still Cookie.
            "Coo\u{212A}ie", "COO\u{212A}IE", "Set-Coo\u{212A}ie", "", "-", "Authorization ", " Cookie",
        ]
        for name in names {
            #expect(log.isSensitive(name) == Self.referenceSensitive(name, configuration), "\(name)")
        }
        let headers = names.enumerated().map { (name: $1, value: "value-\($0)") }
        let expected = Self.referenceRedacted(headers, configuration)
        #expect(log.redacted(headers) == expected)
        #expect(log.redacted(ResponseHeaderFields(headers)) == expected)
        // The one-buffer build falls back to appending when told too small a size.
        for capacity in [0, 1, 20, expected.utf8.count - 1, expected.utf8.count] {
            #expect(log.redacted(count: headers.count, capacity: capacity, name: { headers[$0].name },
                value: { headers[$0].value }) == expected)
        }
        #expect(log.redacted([]) == "")
        #expect(log.redacted(ResponseHeaderFields()) == "")
    }

    @Test func headerRedaction_hidesTheUsualSecrets() {
        let (log, _) = Self.log(extraSensitive: ["X-Api-Key"])
        let text = log.redacted([
            (name: "authorization", value: "Bearer a"), (name: "COOKIE", value: "b=1"),
            (name: "Set-cookie", value: "c=2"), (name: "Proxy-Authorization", value: "Basic d"),
            (name: "x-API-key", value: "e"), (name: "Accept", value: "*/*"),
        ])
        #expect(text == "authorization: <redacted>; COOKIE: <redacted>; Set-cookie: <redacted>;"
            + " Proxy-Authorization: <redacted>; x-API-key: <redacted>; Accept: */*")
    }

    @Test func seconds_asPercentPoint3f() {
        var values: [Double] = [
            0, -0.0, 0.001, 0.0004, 0.0006, 0.999, 0.9996, 1, 1.5, 12.25, 59.9994, 59.9996, 3600.123, 1e6 + 0.25,
            86_400 * 365, -0.0004, -1.25, 1e14, 1e15, 1e300, .infinity, -.infinity, .nan,
            // Exact halves of a millisecond (printf: to even), and near ones.
            0.0625, 0.1875, 0.3125, 1.0625, 2.4375, -0.0625, 0.0005, 0.0015, 0.0025, 2.0005, 1.2345, 4.0065,
        ]
        for millisecond in 0..<4000 { values.append(Double(millisecond) / 1000 + 0.0005) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 { values.append(Double.random(in: 0..<120, using: &generator)) }
        for value in values {
            #expect(TaskLog.formatted(seconds: value) == String(format: "%.3f", value), "\(value)")
        }
    }

    @Test func kindNames_asInterpolation() {
        for kind in [TaskKind.data, .upload, .download] {
            #expect(TaskLog.name(of: kind) == "\(kind)")
        }
    }
}
