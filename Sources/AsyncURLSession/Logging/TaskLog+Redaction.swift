internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a log line may show of headers and URLs: credentials, cookies and
/// the configuration's sensitive header names redacted, userinfo removed
/// from URLs. Bytes first (ASCII names and URLs, no intermediate strings);
/// anything not plain ASCII takes the String path, so what is redacted
/// never depends on the fast path.
extension TaskLog {

    /// `name: value; name: value`, sensitive values as `<redacted>`.
    func redacted(_ headers: [(name: String, value: String)]) -> String {
        var capacity = 0
        for (name, value) in headers {
            capacity += name.utf8.count + max(value.utf8.count, Self.redactedValue.utf8.count) + 4
        }
        return redacted(
            count: headers.count, capacity: capacity, name: { headers[$0].name }, value: { headers[$0].value })
    }

    /// As for an array of pairs; a redacted value is never decoded.
    func redacted(_ headers: ResponseHeaderFields) -> String {
        // A field's text is its bytes as UTF-8, or as Latin-1 (two bytes
        // each at most), so this is enough, "<redacted>" and separators
        // included.
        let capacity = 2 * headers.byteCount + (Self.redactedValue.utf8.count + 4) * headers.count
        return redacted(count: headers.count, capacity: capacity, name: headers.name(at:), value: headers.value(at:))
    }

    /// Fields `0..<count` as `name: value` joined by `; `, built in one
    /// buffer of `capacity` bytes (many small appends to a String cost more
    /// than the copying); again in a buffer twice as large should the text
    /// not fit after all.
    func redacted(
        count: Int, capacity: Int, name: (Int) -> String, value: (Int) -> String
    ) -> String {
        guard count > 0 else { return "" }
        var capacity = max(capacity, 64)
        while true {
            var fits = true
            let text = String(unsafeUninitializedCapacity: capacity) { buffer -> Int in
                // Its own state, not captured variables: those cost a dynamic
                // exclusivity check on every access.
                var writer = ByteWriter(buffer: buffer)
                for index in 0..<count {
                    if index > 0 { writer.put("; ") }
                    let fieldName = name(index)
                    writer.put(fieldName)
                    writer.put(": ")
                    writer.put(isSensitive(fieldName) ? Self.redactedValue : value(index))
                }
                fits = writer.fits
                return writer.fits ? writer.end : 0
            }
            if fits { return text }
            capacity *= 2
        }
    }

    /// Copies Strings' UTF-8 one after the other into a buffer, until one
    /// does not fit.
    private struct ByteWriter {
        let buffer: UnsafeMutableBufferPointer<UInt8>
        var end = 0
        var fits = true

        mutating func put(_ piece: String) {
            guard fits else { return }
            let room = buffer.count - end
            let copied = piece.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
                guard bytes.count <= room else { return nil }
                if let source = bytes.baseAddress, !bytes.isEmpty {
                    (buffer.baseAddress! + end).update(from: source, count: bytes.count)
                }
                return bytes.count
            }
            switch copied {
            case .some(.some(let count)):
                end += count
            case .some(.none):
                fits = false
            case .none:
                for byte in piece.utf8 {
                    guard end < buffer.count else {
                        fits = false
                        return
                    }
                    buffer[end] = byte
                    end += 1
                }
            }
        }
    }

    /// Whether the value of header `name` (any case) is never logged:
    /// `alwaysRedacted` and the configuration's names, as
    /// `name.lowercased()` looked up in both sets.
    func isSensitive(_ name: String) -> Bool {
        let verdict = name.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            // Unicode lowercasing can turn a non-ASCII name into an ASCII
            // one (the Kelvin sign into "k"): only ASCII takes this path.
            for byte in bytes where byte >= 0x80 { return nil }
            if Self.isAlwaysRedacted(bytes) { return true }
            guard hasExtraSensitiveNames else { return false }
            let lowercased = String(unsafeUninitializedCapacity: bytes.count) { buffer in
                for index in bytes.indices { buffer[index] = bytes[index].asciiLowercased }
                return bytes.count
            }
            return sensitiveNames.contains(lowercased)
        }
        if let verdict, let verdict { return verdict }
        let lowercased = name.lowercased()
        return Self.alwaysRedacted.contains(lowercased) || sensitiveNames.contains(lowercased)
    }

    /// Whether ASCII `name` is one of `alwaysRedacted`, ASCII case ignored.
    private static func isAlwaysRedacted(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let bytes = UnsafeRawBufferPointer(name)
        return switch name.count {
        case 6: bytes.equalsIgnoringASCIICase("cookie")
        case 10: bytes.equalsIgnoringASCIICase("set-cookie")
        case 13: bytes.equalsIgnoringASCIICase("authorization")
        case 19: bytes.equalsIgnoringASCIICase("proxy-authorization")
        default: false
        }
    }

    static func redacted(_ url: URL?) -> String {
        guard let url else { return "-" }
        return redacted(url.absoluteString)
    }

    /// The URL with its password (and user) replaced: everything between
    /// `://` and the authority's last `@`.
    static func redacted(_ url: String) -> String {
        let scanned = url.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            switch scanUserInfo(bytes) {
            case .nonASCII: return nil
            case .none: return url
            case .userInfo(let authorityStart, let at):
                var text = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<authorityStart]), as: UTF8.self)
                text.reserveCapacity(authorityStart + redactedValue.utf8.count + bytes.count - at)
                text += redactedValue
                text += String(decoding: UnsafeBufferPointer(rebasing: bytes[at...]), as: UTF8.self)
                return text
            }
        }
        if let scanned, let scanned { return scanned }
        return redactedByCharacters(url)
    }

    private enum UserInfoScan {
        case nonASCII
        case none
        /// The authority starts at `authorityStart` (after `://`), and its
        /// last `@` is at `at`.
        case userInfo(authorityStart: Int, at: Int)
    }

    /// In ASCII every byte is a Character (CR LF aside, which none of the
    /// bytes looked for is part of), so this finds what
    /// `redactedByCharacters` finds.
    private static func scanUserInfo(_ bytes: UnsafeBufferPointer<UInt8>) -> UserInfoScan {
        var index = 0
        var authorityStart: Int?
        while index < bytes.count {
            let byte = bytes[index]
            if byte >= 0x80 { return .nonASCII }
            if byte == UInt8(ascii: ":"), index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "/"),
                bytes[index + 2] == UInt8(ascii: "/")
            {
                authorityStart = index + 3
                break
            }
            index += 1
        }
        guard let authorityStart else { return .none }
        var at: Int?
        index = authorityStart
        scan: while index < bytes.count {
            switch bytes[index] {
            case 0x80...: return .nonASCII
            case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"): break scan
            case UInt8(ascii: "@"): at = index
            default: break
            }
            index += 1
        }
        // A non-ASCII byte anywhere (a combining mark after a "/", say)
        // could make the Characters differ from the bytes.
        for byte in bytes[index...] where byte >= 0x80 { return .nonASCII }
        guard let at else { return .none }
        return .userInfo(authorityStart: authorityStart, at: at)
    }

    /// The original, Character by Character: for URLs that are not ASCII.
    private static func redactedByCharacters(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<schemeEnd.upperBound]) + redactedValue + String(rest[at...])
    }
}

extension TaskLog {
    /// Query keys whose values a trace never shows (compared ignoring
    /// case): OpenTelemetry's list for `url.full` (AWSAccessKeyId,
    /// Signature, sig, X-Goog-Signature) and the usual names of tokens,
    /// keys and passwords.
    static let sensitiveQueryNames: Set<String> = [
        "awsaccesskeyid", "signature", "sig", "x-goog-signature", "x-amz-signature", "x-amz-credential",
        "x-amz-security-token", "token", "access_token", "refresh_token", "id_token", "api_key", "apikey",
        "key", "password", "passwd", "secret", "client_secret", "code", "auth", "session",
    ]

    /// `url.full` for a span: as the log shows a URL but with the user and
    /// password removed (not replaced), and the values of sensitive query
    /// keys as `REDACTED` (OpenTelemetry's word). Only made with a tracer
    /// in use.
    static func traceURL(_ url: URL) -> String {
        guard url.user != nil || url.password != nil || url.query != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return url.absoluteString }
        components.user = nil
        components.password = nil
        if let items = components.percentEncodedQueryItems,
            items.contains(where: { sensitiveQueryNames.contains($0.name.lowercased()) })
        {
            components.percentEncodedQueryItems = items.map { item in
                guard item.value != nil, sensitiveQueryNames.contains(item.name.lowercased()) else { return item }
                return URLQueryItem(name: item.name, value: "REDACTED")
            }
        }
        // Whatever URLComponents could not rebuild still loses its password.
        return components.url?.absoluteString ?? redacted(url.absoluteString)
    }
}
