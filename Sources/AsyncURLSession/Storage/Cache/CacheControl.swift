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

    /// `name[=value]` pairs split at commas outside quoted strings; names lowercased.
    private static func directives(in field: String) -> [(name: String, value: String?)] {
        var result: [(name: String, value: String?)] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        func close() {
            let piece = current.trimmingCharacters(in: .whitespaces)
            current = ""
            guard !piece.isEmpty else { return }
            guard let equals = piece.firstIndex(of: "=") else {
                result.append((piece.lowercased(), nil))
                return
            }
            let name = piece[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            var value = piece[piece.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\", with: "")
            }
            result.append((name, value))
        }
        for character in field {
            if escaped {
                escaped = false
            } else if inQuotes, character == "\\" {
                escaped = true
            } else if character == "\"" {
                inQuotes.toggle()
            } else if character == ",", !inQuotes {
                close()
                continue
            }
            current.append(character)
        }
        close()
        return result
    }
}
