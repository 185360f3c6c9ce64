import Foundation

/// The persistent cookies of a jar (those with an expiry; session cookies
/// die with the process) in a JSON file of ours, written atomically. A file
/// that is not ours, is open to others, is too large or does not decode is
/// refused whole and left alone: the jar starts empty and says why.
struct CookieFile: Sendable {
    let url: URL

    /// A jar's cookies are few kilobytes each at most; this bounds a
    /// hostile file's cost.
    static let maximumSize = 8 << 20

    static var defaultURL: URL? { StorageLocation.defaultFolder?.appendingPathComponent("cookies.json") }

    private struct Entry: Codable {
        var name: String
        var value: String
        var domain: String
        var hostOnly: Bool
        var path: String
        var secure: Bool
        var httpOnly: Bool
        var sameSite: String?
        var expires: Double
        var created: Double
    }

    func load(now: Date, policy: CookiePolicy) -> Result<[StoredCookie], StorageFileError> {
        switch StorageLocation.readPrivateFile(url, limit: Self.maximumSize) {
        case .failure(let error):
            return .failure(error)
        case .success(nil):
            return .success([])
        case .success(let data?):
            guard let entries = try? JSONDecoder().decode([Entry].self, from: data) else {
                return .failure(StorageFileError("\(url.path) is not a cookie file of this library (it does not decode)"))
            }
            var cookies: [StoredCookie] = []
            for entry in entries {
                let cookie = StoredCookie(
                    name: entry.name, value: entry.value, domain: entry.domain, hostOnly: entry.hostOnly,
                    path: entry.path, secure: entry.secure, httpOnly: entry.httpOnly, sameSite: entry.sameSite,
                    expires: Date(timeIntervalSince1970: entry.expires), created: Date(timeIntervalSince1970: entry.created))
                // Each entry must be one a response could have set: a
                // tampered file cannot plant a cookie for a public suffix.
                guard policy.isPlausible(cookie), !cookie.isExpired(at: now) else { continue }
                cookies.append(cookie)
            }
            return .success(cookies)
        }
    }

    /// Writes the persistent ones of `cookies`; returns why it could not.
    func save(_ cookies: [StoredCookie]) -> String? {
        if let problem = StorageLocation.prepare(url.deletingLastPathComponent()) { return problem }
        let entries = cookies.compactMap { cookie -> Entry? in
            guard let expires = cookie.expires else { return nil }
            return Entry(
                name: cookie.name, value: cookie.value, domain: cookie.domain, hostOnly: cookie.hostOnly,
                path: cookie.path, secure: cookie.secure, httpOnly: cookie.httpOnly, sameSite: cookie.sameSite,
                expires: expires.timeIntervalSince1970, created: cookie.created.timeIntervalSince1970)
        }
        guard let data = try? JSONEncoder().encode(entries) else { return "cannot encode the cookies" }
        return StorageLocation.writeAtomically(data, to: url)
    }
}
