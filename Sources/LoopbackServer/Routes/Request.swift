import Foundation
import NIOHTTP1

/// Everything a route may look at: the request head, its parsed target, and where it came from.
struct RequestInfo {
    let head: HTTPRequestHead
    let target: RequestTarget
    /// Id of the TCP connection (for HTTP/2: of the connection carrying the stream).
    let connectionID: Int
    let transport: Transport
    /// The server's nonce key and Authorization counter.
    let auth: AuthState
    /// Per-key attempt counters of /flaky.
    let flaky: FlakyCounters
}

/// A request a route cannot serve as asked (bad number, missing parameter): answered with 400.
struct BadRequest: Error {
    let message: String
}

/// The request target split into path segments and query pairs, both percent-decoded.
///
/// Only percent-escapes are decoded; "+" stays "+" (it is not a form body), so values such as
/// redirect locations arrive exactly as the test wrote them.
struct RequestTarget {
    /// The raw path, without the query.
    let path: String
    /// Non-empty path segments: "/bytes/10" -> ["bytes", "10"].
    let segments: [String]
    /// Query pairs in order; repeated names are kept. "a" without "=" has value "".
    let query: [(name: String, value: String)]
    /// The query as sent, without "?" (for routes that decode bytes themselves).
    private let rawQuery: Substring

    init(uri: String) {
        var pathAndQuery = Substring(uri)
        // Absolute form ("http://host:port/path"), as sent to proxies: keep from the path on.
        // (Origin form starts with "/" and may have "://" in its query, e.g. a location.)
        if !pathAndQuery.hasPrefix("/"), let schemeEnd = pathAndQuery.range(of: "://") {
            let afterAuthority = pathAndQuery[schemeEnd.upperBound...]
            pathAndQuery = afterAuthority.firstIndex(of: "/").map { afterAuthority[$0...] } ?? "/"
        }
        let queryStart = pathAndQuery.firstIndex(of: "?")
        let path = queryStart.map { pathAndQuery[..<$0] } ?? pathAndQuery
        self.path = String(path)
        self.segments = path.split(separator: "/").map { Self.percentDecoded($0) }

        var query: [(name: String, value: String)] = []
        rawQuery = queryStart.map { pathAndQuery[pathAndQuery.index(after: $0)...] } ?? ""
        for pair in rawQuery.split(separator: "&") {
            if let equals = pair.firstIndex(of: "=") {
                let name = Self.percentDecoded(pair[..<equals])
                let value = Self.percentDecoded(pair[pair.index(after: equals)...])
                query.append((name, value))
            } else {
                query.append((Self.percentDecoded(pair), ""))
            }
        }
        self.query = query
    }

    /// The first value of query parameter `name`.
    func value(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// The first value of query parameter `name` decoded to bytes: unlike `value(_:)` it keeps
    /// escapes that are not UTF-8 ("%E9") and control bytes ("%0D") as the bytes they spell.
    func byteValue(_ name: String) -> [UInt8]? {
        for pair in rawQuery.split(separator: "&") {
            let equals = pair.firstIndex(of: "=") ?? pair.endIndex
            guard Self.percentDecoded(pair[..<equals]) == name else { continue }
            return equals == pair.endIndex ? [] : Self.percentDecodedBytes(pair[pair.index(after: equals)...])
        }
        return nil
    }

    /// The query pairs, in order, for routes that send them as header fields (Set-Cookie
    /// values, response fields, trailers): each name a token and each value free of CR, LF
    /// and NUL, checked here so a bad pair is a 400 naming what it is (`kind`: "cookie",
    /// "field"), not an encoder error that kills the connection.
    func headerPairs(kind: String) throws(BadRequest) -> [(name: String, value: String)] {
        for (name, value) in query {
            guard HTTPSyntax.isToken(name) else {
                throw BadRequest(message: "\(name.debugDescription) is not a valid \(kind) name")
            }
            guard HTTPSyntax.isSendableHeaderValue(value) else {
                throw BadRequest(message: "\(kind) values must not contain CR, LF or NUL")
            }
        }
        return query
    }

    /// Query parameter `name` as an integer in `range`, `defaultValue` when absent.
    func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(BadRequest) -> Int {
        guard let text = value(name) else { return defaultValue }
        return try Self.integer(text, named: name, in: range)
    }

    /// Path segment `index` as an integer in `range`.
    func integerSegment(_ index: Int, named name: String, in range: ClosedRange<Int> = 0...Int.max) throws(BadRequest) -> Int {
        try Self.integer(segments[index], named: name, in: range)
    }

    static func integer(_ text: String, named name: String, in range: ClosedRange<Int>) throws(BadRequest) -> Int {
        guard let number = Int(text), range.contains(number) else {
            let expected = range.upperBound == Int.max
                ? "an integer >= \(range.lowerBound)"
                : "an integer in \(range.lowerBound)...\(range.upperBound)"
            throw BadRequest(message: "\(name) must be \(expected), got \(text.debugDescription)")
        }
        return number
    }

    /// Bytes of `text` with each "%XX" replaced by the byte it spells; a malformed escape
    /// stays as written.
    private static func percentDecodedBytes(_ text: Substring) -> [UInt8] {
        let utf8 = Array(text.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = Hex.value(utf8[index + 1]), let low = Hex.value(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return bytes
    }

    private static func percentDecoded(_ text: Substring) -> String {
        let string = String(text)
        // Malformed escapes ("%zz") are kept as written rather than rejected.
        return string.removingPercentEncoding ?? string
    }
}
