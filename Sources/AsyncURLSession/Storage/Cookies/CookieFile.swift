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

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }

    func load(now: Date, policy: CookiePolicy) -> Result<[StoredCookie], StorageFileError> {
        switch StorageLocation.readPrivateFile(url, limit: Self.maximumSize) {
        case .failure(let error):
            return .failure(error)
        case .success(nil):
            return .success([])
        case .success(let data?):
            guard let stored = Self.decode(data, now: now, policy: policy) else {
                return .failure(StorageFileError("\(url.path) is not a cookie file of this library (it does not decode)"))
            }
            return .success(stored)
        }
    }

    /// The cookies a file's bytes hold that a response could have set, or
    /// nil when the bytes are not such a file. The file is untrusted input
    /// (another program of the user's may have written it), so it is fuzzed.
    static func decode(_ data: Data, now: Date, policy: CookiePolicy) -> [StoredCookie]? {
        guard let stored = try? decoder.decode([StoredCookie].self, from: data) else { return nil }
        // Each entry must be one a response could have set (a tampered
        // file cannot plant a cookie for a public suffix), and lasting.
        return stored.filter { policy.isPlausible($0) && $0.expires != nil && !$0.isExpired(at: now) }
    }

    /// Writes the persistent ones of `cookies`; returns why it could not.
    func save(_ cookies: [StoredCookie]) -> String? {
        if let problem = StorageLocation.prepare(url.deletingLastPathComponent()) { return problem }
        guard let data = try? Self.encoder.encode(cookies.filter { $0.expires != nil }) else {
            return "cannot encode the cookies"
        }
        return StorageLocation.writeAtomically(data, to: url)
    }
}
