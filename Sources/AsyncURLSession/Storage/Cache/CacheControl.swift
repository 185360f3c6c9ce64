internal import CurlEngine
import Foundation

/// The directives of a message's Cache-Control fields (RFC 9111 §5.2), for
/// requests and responses alike. Pure parsing; unknown directives are
/// ignored, and where a directive repeats the first one counts (§4.2.1).
struct CacheControl: Equatable, Sendable {
    var maxAge: Int?
    var noStore = false
    /// Also set by `no-cache="field"`: stricter than revalidating only those
    /// fields, and never wrong.
    var noCache = false
    var mustRevalidate = false
    var isPublic = false
    var isPrivate = false
    /// s-maxage: for shared caches, ignored by ours (a private one), except
    /// that it makes an authenticated response storable (§3.5).
    var sharedMaxAge: Int?
    /// Request only: `max-stale` without a value accepts any staleness.
    var maxStale: Int?
    var minFresh: Int?
    var onlyIfCached = false

    init() {}

    /// - Parameter fields: every Cache-Control field of the message, in order.
    init(fields: [String]) {
        var seen: Set<String> = []
        for field in fields {
            for directive in Self.directives(in: field) {
                let name = directive.name
                guard seen.insert(name).inserted else { continue }
                switch name {
                case "max-age": maxAge = Self.seconds(directive.value) ?? 0  // invalid: stale (§4.2.1)
                case "s-maxage": sharedMaxAge = Self.seconds(directive.value) ?? 0
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "must-revalidate", "proxy-revalidate": mustRevalidate = true
                case "public": isPublic = true
                case "private": isPrivate = true
                case "max-stale": maxStale = directive.value.map { Self.seconds($0) ?? 0 } ?? Int.max
                case "min-fresh": minFresh = Self.seconds(directive.value) ?? 0
                case "only-if-cached": onlyIfCached = true
                default: break
                }
            }
        }
    }

    /// delta-seconds: digits only; values too large to hold are the largest.
    private static func seconds(_ text: String?) -> Int? {
        guard let text, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text) ?? Int(Int32.max)
    }

    /// `name[=value]` pairs split at commas outside quoted strings; names
    /// lowercased (ASCII: directive names are tokens), pieces trimmed of
    /// spaces and tabs (HTTP's optional whitespace), a quoted value
    /// unquoted with its backslashes removed.
    ///
    /// Bytes, not Characters and Foundation's trimming and lowercasing:
    /// this runs on the engine thread for every response a cache may store,
    /// and the Foundation version was about a seventh of the CPU of 1 KiB
    /// GETs with cacheable responses.
    private static func directives(in field: String) -> [(name: String, value: String?)] {
        var result: [(name: String, value: String?)] = []
        var field = field
        field.withUTF8 { bytes in
            var start = 0
            var inQuotes = false
            var escaped = false
            for index in 0..<bytes.count {
                let byte = bytes[index]
                if escaped {
                    escaped = false
                } else if inQuotes, byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes.toggle()
                } else if byte == UInt8(ascii: ","), !inQuotes {
                    if let directive = directive(bytes, start..<index) { result.append(directive) }
                    start = index + 1
                }
            }
            if let directive = directive(bytes, start..<bytes.count) { result.append(directive) }
        }
        return result
    }

    /// One comma-separated piece as a directive; nil when it is blank.
    private static func directive(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>
    ) -> (name: String, value: String?)? {
        let piece = trimmed(bytes, range)
        guard !piece.isEmpty else { return nil }
        guard let equals = bytes[piece].firstIndex(of: UInt8(ascii: "=")) else {
            return (lowercasedASCII(bytes, piece), nil)
        }
        let name = lowercasedASCII(bytes, trimmed(bytes, piece.lowerBound..<equals))
        let valueRange = trimmed(bytes, (equals + 1)..<piece.upperBound)
        if valueRange.count >= 2, bytes[valueRange.lowerBound] == UInt8(ascii: "\""),
            bytes[valueRange.upperBound - 1] == UInt8(ascii: "\"")
        {
            let inner = bytes[(valueRange.lowerBound + 1)..<(valueRange.upperBound - 1)]
            return (name, String(decoding: inner.lazy.filter { $0 != UInt8(ascii: "\\") }, as: UTF8.self))
        }
        return (name, String(decoding: UnsafeBufferPointer(rebasing: bytes[valueRange]), as: UTF8.self))
    }

    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, bytes[lower] == UInt8(ascii: " ") || bytes[lower] == UInt8(ascii: "\t") { lower += 1 }
        while upper > lower, bytes[upper - 1] == UInt8(ascii: " ") || bytes[upper - 1] == UInt8(ascii: "\t") { upper -= 1 }
        return lower..<upper
    }

    private static func lowercasedASCII(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: bytes[range].lazy.map(\.asciiLowercased), as: UTF8.self)
    }
}
