import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A cookie as the jar keeps it (RFC 6265bis §5.7's storage fields), and as
/// its file holds it (JSON, dates in seconds since 1970).
struct StoredCookie: Equatable, Sendable, Codable {
    var name: String
    var value: String
    /// The host (host-only cookies) or the domain, lowercased, no leading dot.
    var domain: String
    var hostOnly: Bool
    var path: String
    var secure: Bool
    var httpOnly: Bool
    var sameSite: String?
    /// nil: a session cookie, gone when the jar is.
    var expires: Date?
    var created: Date
    /// The jar's insertion order, which breaks ties between cookies created
    /// at the same moment (the fields of one response).
    var sequence: UInt64 = 0

    /// Two cookies with the same key replace each other.
    struct Key: Hashable, Sendable {
        var name: String
        var domain: String
        var hostOnly: Bool
        var path: String
    }

    var key: Key { Key(name: name, domain: domain, hostOnly: hostOnly, path: path) }

    /// `sequence` is the jar's, not the cookie's: not written.
    private enum CodingKeys: String, CodingKey {
        case name, value, domain, hostOnly, path, secure, httpOnly, sameSite, expires, created
    }

    func isExpired(at now: Date) -> Bool {
        if let expires { return expires <= now }
        return false
    }

    /// Foundation's value, as `HTTPCookieStorage` hands cookies out (a
    /// domain cookie's domain with its leading dot, as Apple's).
    var httpCookie: HTTPCookie? {
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: name, .value: value, .path: path,
            .domain: hostOnly ? domain : "." + domain,
        ]
        if secure { properties[.secure] = "TRUE" }
        if let expires { properties[.expires] = expires } else { properties[.discard] = "TRUE" }
        if httpOnly { properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE" }
        return HTTPCookie(properties: properties)
    }

    init(
        name: String, value: String, domain: String, hostOnly: Bool, path: String, secure: Bool, httpOnly: Bool,
        sameSite: String?, expires: Date?, created: Date
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.hostOnly = hostOnly
        self.path = path
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
        self.expires = expires
        self.created = created
    }

    /// A cookie someone put in the jar directly: stored as given.
    init(_ cookie: HTTPCookie, created: Date) {
        var domain = cookie.domain.lowercased()
        let hostOnly = !domain.hasPrefix(".")
        if !hostOnly { domain.removeFirst() }
        self.init(
            name: cookie.name, value: cookie.value, domain: domain, hostOnly: hostOnly,
            path: cookie.path.isEmpty ? "/" : cookie.path, secure: cookie.isSecure, httpOnly: cookie.isHTTPOnly,
            sameSite: nil, expires: cookie.isSessionOnly ? nil : cookie.expiresDate, created: created)
    }
}
