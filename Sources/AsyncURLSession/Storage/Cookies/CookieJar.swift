import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A session's cookies, as `HTTPCookieStorage`: responses store their
/// Set-Cookie fields here (from every hop, redirects included) and requests
/// send the matching ones, by the rules of RFC 6265bis (`CookiePolicy`):
/// no Domain that is a public suffix or that does not match the host, Path
/// scoping, Secure only over https and never set from http, Max-Age and
/// Expires (Max-Age wins; 0 or a past date deletes), at most 50 cookies per
/// domain and 3,000 in all (the oldest go first).
///
/// `.shared` is what `.default` configurations use: its cookies that have
/// an expiry are kept in `$XDG_DATA_HOME/AsyncURLSession/cookies.json`
/// (else `~/.local/share/...`; mode 0600 in a 0700 folder, replaced
/// atomically about a second after a change, or at `flush()`). An
/// `.ephemeral` configuration gets a jar of its own that lives in memory
/// only.
public final class CookieJar: Sendable {
    /// The jar of every `.default` configuration, kept on disk.
    public static let shared = CookieJar(publicSuffixes: .system, file: CookieFile.defaultURL.map(CookieFile.init))

    static let maximumPerDomain = 50
    static let maximumTotal = 3000

    private let policy: CookiePolicy
    private let file: CookieFile?
    private let state = Mutex(State())
    private let saving = SaveSchedule()
    /// How many cookies are stored: requests read it without the lock, so
    /// that an empty jar costs a load per request.
    private let storedCount = Atomic<Int>(0)

    private struct State {
        var cookies: [StoredCookie.Key: StoredCookie] = [:]
        var acceptPolicy: HTTPCookie.AcceptPolicy = .always
        var nextSequence: UInt64 = 0
        var fileProblem: String?
        var observer: (@Sendable ([HTTPCookie], URL) -> Void)?
    }

    /// Called with the cookies a response stored (and the URL it came
    /// from), after they are in the jar, on the thread that received the
    /// response: hand work off, do not block. Deletions are not reported.
    public var didStoreCookies: (@Sendable (_ cookies: [HTTPCookie], _ url: URL) -> Void)? {
        get { state.withLock { $0.observer } }
        set { state.withLock { $0.observer = newValue } }
    }

    /// A jar in memory only.
    public convenience init() {
        self.init(publicSuffixes: .system, file: nil)
    }

    /// A jar whose cookies with an expiry are kept in `file` (created 0600,
    /// its folder 0700). A file that is not a private file of ours, or that
    /// does not decode, is refused and left alone: the jar starts empty and
    /// `fileProblem` says why.
    public convenience init(persistingTo file: URL) {
        self.init(publicSuffixes: .system, file: CookieFile(url: file))
    }

    init(publicSuffixes: PublicSuffixList, file: CookieFile? = nil) {
        policy = CookiePolicy(publicSuffixes: publicSuffixes)
        self.file = file
        guard let file else { return }
        switch file.load(now: Date(), policy: policy) {
        case .success(let cookies):
            for cookie in cookies { insert(cookie, persisting: false) }
        case .failure(let error):
            state.withLock { $0.fileProblem = "The cookie file was not loaded: \(error.reason)." }
        }
    }

    /// Why the jar's file could not be read or written, if it could not.
    public var fileProblem: String? { state.withLock { $0.fileProblem } }

    /// Writes the file now (for a jar kept on disk), instead of about a
    /// second after the last change.
    public func flush() {
        guard let file else { return }
        saving.writing()
        let cookies = state.withLock { Array($0.cookies.values) }
        let problem = file.save(cookies)
        state.withLock { $0.fileProblem = problem.map { "The cookie file was not written: \($0)." } }
    }

    /// After a change to cookies that are kept on disk: one write about a
    /// second later, however many changes come meanwhile.
    private func scheduleSave() {
        guard file != nil else { return }
        saving.request { [self] in flush() }
    }

    /// Which responses may set cookies here (`.always` by default;
    /// `.onlyFromMainDocumentDomain` needs the request's `mainDocumentURL`).
    public var acceptPolicy: HTTPCookie.AcceptPolicy {
        get { state.withLock { $0.acceptPolicy } }
        set { state.withLock { $0.acceptPolicy = newValue } }
    }

    /// Every cookie not expired.
    public var cookies: [HTTPCookie] {
        let now = Date()
        return snapshot().filter { !$0.isExpired(at: now) }
            .sorted { ($0.created, $0.sequence) < ($1.created, $1.sequence) }.compactMap(\.httpCookie)
    }

    /// The cookies a request to `url` sends, in the order it sends them.
    public func cookies(for url: URL) -> [HTTPCookie] {
        matching(url).compactMap(\.httpCookie)
    }

    /// Stores a cookie as given (replacing one with the same name, domain
    /// and path), as `HTTPCookieStorage.setCookie` does, unless it is one no
    /// response could have set: a Domain that is a public suffix (`.com`,
    /// `.co.uk`: it would go to every site under it), control characters,
    /// or no domain. Returns whether it was stored.
    @discardableResult
    public func setCookie(_ cookie: HTTPCookie) -> Bool {
        let stored = StoredCookie(cookie, created: Date())
        guard policy.isPlausible(stored) else { return false }
        return insert(stored)
    }

    /// Stores `cookies` as a response from `url` would
    /// (`HTTPCookieStorage.setCookies(_:for:mainDocumentURL:)`): under the
    /// accept policy (`mainDocumentURL` for `.onlyFromMainDocumentDomain`),
    /// and only those `url` may set: a cookie's domain must be `url`'s host
    /// or a domain of it that is no public suffix, and a Secure cookie needs
    /// https. Without a URL, each is stored as `setCookie` would. Returns
    /// how many were stored.
    @discardableResult
    public func setCookies(_ cookies: [HTTPCookie], for url: URL?, mainDocumentURL: URL? = nil) -> Int {
        guard !cookies.isEmpty else { return 0 }
        if let url, !accepts(from: url, mainDocumentURL: mainDocumentURL, policy: acceptPolicy) { return 0 }
        if url == nil, acceptPolicy == .never { return 0 }
        var count = 0
        for cookie in cookies {
            let stored = StoredCookie(cookie, created: Date())
            guard policy.isPlausible(stored) else { continue }
            if let url, !policy.mayBeSet(stored, from: url) { continue }
            if insert(stored, overwrittenFrom: url) { count += 1 }
        }
        return count
    }

    public func deleteCookie(_ cookie: HTTPCookie) {
        remove(StoredCookie(cookie, created: Date()).key)
    }

    /// Forgets every cookie.
    public func removeAll() {
        state.withLock { $0.cookies.removeAll() }
        storedCount.store(0, ordering: .relaxed)
        scheduleSave()
    }

    /// Forgets the cookies stored at `date` or later.
    public func removeCookies(since date: Date) {
        let count = state.withLock { state -> Int in
            state.cookies = state.cookies.filter { $0.value.created < date }
            return state.cookies.count
        }
        storedCount.store(count, ordering: .relaxed)
        scheduleSave()
    }

    /// Stores what a response's Set-Cookie fields say, for the response to
    /// `url` (the request's `mainDocumentURL` for the accept policy). Returns
    /// how many cookies were stored or deleted.
    @discardableResult
    /// - Parameter acceptPolicy: the session's, when it has one; else the jar's.
    public func storeCookies(
        fromSetCookieFields fields: [String], for url: URL, mainDocumentURL: URL? = nil,
        acceptPolicy: HTTPCookie.AcceptPolicy? = nil
    ) -> Int {
        guard !fields.isEmpty, accepts(from: url, mainDocumentURL: mainDocumentURL, policy: acceptPolicy ?? self.acceptPolicy)
        else { return 0 }
        let now = Date()
        var changed = 0
        var stored: [StoredCookie] = []
        defer {
            if !stored.isEmpty, let observer = didStoreCookies { observer(stored.compactMap(\.httpCookie), url) }
        }
        for field in fields {
            guard let parsed = ParsedSetCookie.parse(field) else { continue }
            switch policy.evaluate(parsed, from: url, now: now) {
            case .store(let cookie):
                if insert(cookie, overwrittenFrom: url) {
                    changed += 1
                    stored.append(cookie)
                }
            case .delete(let key):
                remove(key)
                changed += 1
            case .reject:
                continue
            }
        }
        return changed
    }

    /// The Cookie header a request to `url` sends, or nil for none.
    func cookieHeader(for url: URL) -> String? {
        guard storedCount.load(ordering: .relaxed) > 0 else { return nil }
        return CookiePolicy.header(for: matching(url))
    }

    var isEmpty: Bool { storedCount.load(ordering: .relaxed) == 0 }

    // MARK: - Storage

    private func snapshot() -> [StoredCookie] {
        state.withLock { Array($0.cookies.values) }
    }

    private func matching(_ url: URL) -> [StoredCookie] {
        let now = Date()
        let matched = snapshot().filter { CookiePolicy.matches($0, url: url, now: now) }
        return matched.sorted(by: CookiePolicy.sendingOrder)
    }

    private func accepts(from url: URL, mainDocumentURL: URL?, policy: HTTPCookie.AcceptPolicy) -> Bool {
        switch policy {
        case .always: return true
        case .never: return false
        case .onlyFromMainDocumentDomain:
            guard let mainDocumentURL, let main = CookiePolicy.canonicalHost(mainDocumentURL),
                let host = CookiePolicy.canonicalHost(url)
            else { return true }
            return CookiePolicy.domainMatches(host: host, domain: main)
                || CookiePolicy.domainMatches(host: main, domain: host)
        @unknown default: return false
        }
    }

    /// Stores `cookie`; false when the rules keep it out (a cookie from
    /// http may not replace a Secure one, §5.7 step 16).
    @discardableResult
    private func insert(_ cookie: StoredCookie, overwrittenFrom url: URL? = nil, persisting: Bool = true) -> Bool {
        let fromInsecure = url.map { $0.scheme?.lowercased() != "https" } ?? false
        let count = state.withLock { state -> Int? in
            if fromInsecure, !cookie.secure,
                state.cookies.values.contains(where: { existing in
                    existing.secure && existing.name == cookie.name
                        && (CookiePolicy.domainMatches(host: existing.domain, domain: cookie.domain)
                            || CookiePolicy.domainMatches(host: cookie.domain, domain: existing.domain))
                        && CookiePolicy.pathMatches(requestPath: cookie.path, cookiePath: existing.path)
                })
            {
                return nil
            }
            var cookie = cookie
            state.nextSequence += 1
            cookie.sequence = state.nextSequence
            if let old = state.cookies[cookie.key] {
                cookie.created = old.created
                cookie.sequence = old.sequence
            }
            state.cookies[cookie.key] = cookie
            Self.evict(&state.cookies, around: cookie)
            return state.cookies.count
        }
        guard let count else { return false }
        storedCount.store(count, ordering: .relaxed)
        if persisting, cookie.expires != nil { scheduleSave() }
        return true
    }

    private func remove(_ key: StoredCookie.Key) {
        let (count, removed) = state.withLock { state -> (Int, StoredCookie?) in
            let removed = state.cookies.removeValue(forKey: key)
            return (state.cookies.count, removed)
        }
        storedCount.store(count, ordering: .relaxed)
        if removed?.expires != nil { scheduleSave() }
    }

    /// Expired cookies go first; then, over a cap, the oldest of the
    /// domain (or of the jar) other than the one just stored.
    private static func evict(_ cookies: inout [StoredCookie.Key: StoredCookie], around added: StoredCookie) {
        let now = Date()
        let domainKeys = cookies.keys.filter { $0.domain == added.domain }
        if domainKeys.count > maximumPerDomain {
            cookies = cookies.filter { !$0.value.isExpired(at: now) }
            let ordered = cookies.values.filter { $0.domain == added.domain && $0.key != added.key }
                .sorted { ($0.created, $0.sequence) < ($1.created, $1.sequence) }
            for cookie in ordered.prefix(max(0, ordered.count + 1 - maximumPerDomain)) { cookies[cookie.key] = nil }
        }
        if cookies.count > maximumTotal {
            cookies = cookies.filter { !$0.value.isExpired(at: now) }
            let ordered = cookies.values.filter { $0.key != added.key }
                .sorted { ($0.created, $0.sequence) < ($1.created, $1.sequence) }
            for cookie in ordered.prefix(max(0, ordered.count + 1 - maximumTotal)) { cookies[cookie.key] = nil }
        }
    }
}
