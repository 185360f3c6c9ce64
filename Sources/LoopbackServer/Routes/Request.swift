import Foundation
import NIOHTTP1

/// Everything a route may look at: the request head, its parsed target, and where it came from.
struct RequestInfo {
    let head: HTTPRequestHead
    let target: RequestTarget
    /// Id of the TCP connection (for HTTP/2: of the connection carrying the stream).
    let connectionID: Int
    let transport: Transport
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

    init(uri: String) {
        var pathAndQuery = Substring(uri)
        // Absolute form ("http://host:port/path"), as sent to proxies: keep from the path on.
        if let schemeEnd = pathAndQuery.range(of: "://") {
            let afterAuthority = pathAndQuery[schemeEnd.upperBound...]
            pathAndQuery = afterAuthority.firstIndex(of: "/").map { afterAuthority[$0...] } ?? "/"
        }
        let queryStart = pathAndQuery.firstIndex(of: "?")
        let path = queryStart.map { pathAndQuery[..<$0] } ?? pathAndQuery
        self.path = String(path)
        self.segments = path.split(separator: "/").map { Self.percentDecoded($0) }

        var query: [(name: String, value: String)] = []
        if let queryStart {
            let queryString = pathAndQuery[pathAndQuery.index(after: queryStart)...]
            for pair in queryString.split(separator: "&") {
                if let equals = pair.firstIndex(of: "=") {
                    let name = Self.percentDecoded(pair[..<equals])
                    let value = Self.percentDecoded(pair[pair.index(after: equals)...])
                    query.append((name, value))
                } else {
                    query.append((Self.percentDecoded(pair), ""))
                }
            }
        }
        self.query = query
    }

    /// The first value of query parameter `name`.
    func value(_ name: String) -> String? {
        query.first { $0.name == name }?.value
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

    private static func percentDecoded(_ text: Substring) -> String {
        let string = String(text)
        // Malformed escapes ("%zz") are kept as written rather than rejected.
        return string.removingPercentEncoding ?? string
    }
}
