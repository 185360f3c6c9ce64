import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The rules of RFC 6265bis for what a response may store and what a request
/// sends: pure functions of their inputs (the public suffix list comes in as
/// a value), so every rule is a unit test without a server.
struct CookiePolicy {
    let publicSuffixes: PublicSuffixList

    /// What a Set-Cookie from `url` does to the jar.
    enum Verdict: Equatable {
        case store(StoredCookie)
        /// An expired cookie: remove the one with this key, if any.
        case delete(StoredCookie.Key)
        case reject(String)
    }

    func evaluate(_ parsed: ParsedSetCookie, from url: URL, now: Date) -> Verdict {
        guard let host = Self.canonicalHost(url) else { return .reject("the URL has no host") }
        let isSecureScheme = url.scheme?.lowercased() == "https"
        // Max-Age wins over Expires (§5.6.2).
        var expires: Date?
        if let maxAge = parsed.maxAge {
            expires = maxAge <= 0 ? Date.distantPast : now.addingTimeInterval(TimeInterval(min(maxAge, 400 * 86_400)))
        } else if let date = parsed.expires {
            expires = min(date, now.addingTimeInterval(400 * 86_400))  // the 400-day cap of 6265bis
        }
        let domain: String
        let hostOnly: Bool
        if let attribute = parsed.domain {
            if publicSuffixes.isPublicSuffix(attribute) {
                // A public suffix is only a Domain for itself (host-only then).
                guard attribute == host else { return .reject("Domain=\(attribute) is a public suffix") }
                domain = host
                hostOnly = true
            } else {
                guard Self.domainMatches(host: host, domain: attribute) else {
                    return .reject("Domain=\(attribute) does not match the host \(host)")
                }
                domain = attribute
                hostOnly = false
            }
        } else {
            domain = host
            hostOnly = true
        }
        if parsed.secure && !isSecureScheme { return .reject("a Secure cookie cannot be set over http") }
        let path = parsed.path ?? Self.defaultPath(url)
        if parsed.name.hasPrefix("__Secure-") && !(parsed.secure && isSecureScheme) {
            return .reject("a __Secure- cookie must be Secure and set over https")
        }
        if parsed.name.hasPrefix("__Host-") && !(parsed.secure && isSecureScheme && parsed.domain == nil && path == "/") {
            return .reject("a __Host- cookie must be Secure, set over https, host-only, with Path=/")
        }
        let cookie = StoredCookie(
            name: parsed.name, value: parsed.value, domain: domain, hostOnly: hostOnly, path: path,
            secure: parsed.secure, httpOnly: parsed.httpOnly, sameSite: parsed.sameSite, expires: expires, created: now)
        if let expires, expires <= now { return .delete(cookie.key) }
        return .store(cookie)
    }

    /// Whether a stored cookie (read back from a file) is one a response
    /// could have set: no control characters, within the size caps, a path,
    /// and a Domain that is no public suffix.
    func isPlausible(_ cookie: StoredCookie) -> Bool {
        let text = cookie.name + cookie.value + cookie.domain + cookie.path
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == ";" }),
            cookie.name.utf8.count + cookie.value.utf8.count <= ParsedSetCookie.maximumNameValueBytes,
            cookie.path.hasPrefix("/"), !cookie.domain.isEmpty
        else { return false }
        return cookie.hostOnly || !publicSuffixes.isPublicSuffix(cookie.domain)
    }

    /// Whether a response from `url` could have set `cookie` (a cookie made
    /// by the program, handed in with the URL it came from): its domain is
    /// `url`'s host, or a domain of that host which is no public suffix, and
    /// a Secure cookie comes over https (§5.7).
    func mayBeSet(_ cookie: StoredCookie, from url: URL) -> Bool {
        guard let host = Self.canonicalHost(url) else { return false }
        if cookie.secure, url.scheme?.lowercased() != "https" { return false }
        if cookie.domain == host { return true }
        return !cookie.hostOnly && Self.domainMatches(host: host, domain: cookie.domain)
            && !publicSuffixes.isPublicSuffix(cookie.domain)
    }

    /// Whether `cookie` goes with a request to `url` (§5.8.3).
    static func matches(_ cookie: StoredCookie, url: URL, now: Date) -> Bool {
        guard let host = canonicalHost(url), !cookie.isExpired(at: now) else { return false }
        if cookie.hostOnly {
            guard host == cookie.domain else { return false }
        } else {
            guard domainMatches(host: host, domain: cookie.domain) else { return false }
        }
        if cookie.secure, url.scheme?.lowercased() != "https" { return false }
        return pathMatches(requestPath: requestPath(url), cookiePath: cookie.path)
    }

    /// The Cookie header for `cookies` (already matched): longer paths
    /// first, then the older ones (§5.8.3).
    static func header(for cookies: [StoredCookie]) -> String? {
        guard !cookies.isEmpty else { return nil }
        let ordered = cookies.sorted(by: sendingOrder)
        return ordered.map { $0.name.isEmpty ? $0.value : "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Longer paths first, then the older cookies (§5.8.3), then the order
    /// they were stored in.
    static func sendingOrder(_ a: StoredCookie, _ b: StoredCookie) -> Bool {
        if a.path.count != b.path.count { return a.path.count > b.path.count }
        if a.created != b.created { return a.created < b.created }
        return a.sequence < b.sequence
    }

    /// Lowercased host without the brackets of an IPv6 literal.
    static func canonicalHost(_ url: URL) -> String? {
        guard var host = url.host?.lowercased(), !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }

    /// §5.1.3: the same, or a subdomain of `domain` (never for an IP address).
    static func domainMatches(host: String, domain: String) -> Bool {
        if host == domain { return true }
        guard host.hasSuffix("." + domain), !isIPAddress(host) else { return false }
        return true
    }

    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }

    /// §5.1.4: the directory of the request path ("/" when there is none).
    static func defaultPath(_ url: URL) -> String {
        let path = requestPath(url)
        guard path.hasPrefix("/"), let lastSlash = path.lastIndex(of: "/"), lastSlash != path.startIndex else {
            return "/"
        }
        return String(path[..<lastSlash])
    }

    /// §5.1.4: `/a` matches `/a`, `/a/` and `/a/b`, never `/ab`.
    static func pathMatches(requestPath: String, cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if cookiePath.hasSuffix("/") { return true }
        return requestPath.dropFirst(cookiePath.count).first == "/"
    }

    static func requestPath(_ url: URL) -> String {
        let path = url.path(percentEncoded: true)
        return path.isEmpty ? "/" : path
    }
}
