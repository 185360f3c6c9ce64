import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Apple's `HTTPCookieStorage`, backed by an async core `CookieJar`, so code
/// that reads or sets cookies directly gets the same rules (public
/// suffixes, Secure, Path, ...) as its sessions. In a file that imports
/// `URLSessionCompat` this class shadows FoundationNetworking's; the cookies
/// themselves are still Foundation's `HTTPCookie` values.
open class HTTPCookieStorage: NSObject, @unchecked Sendable {
    // @unchecked: its only state is the jar, which is Sendable.

    /// The jar underneath: `CookieJar.shared` for `shared`.
    public let cookieJar: CookieJar

    /// A storage over `cookieJar` (a new, empty jar by default).
    public init(cookieJar: CookieJar = CookieJar()) {
        self.cookieJar = cookieJar
        super.init()
    }

    private static let sharedStorage = HTTPCookieStorage(cookieJar: .shared)
    private static let groups = Mutex<[String: HTTPCookieStorage]>([:])

    /// The storage of `.default` configurations.
    open class var shared: HTTPCookieStorage { sharedStorage }

    /// One storage per identifier for this process (app groups are an Apple
    /// platform notion: nothing is shared with other programs).
    open class func sharedCookieStorage(forGroupContainerIdentifier identifier: String) -> HTTPCookieStorage {
        groups.withLock { groups in
            if let existing = groups[identifier] { return existing }
            let storage = HTTPCookieStorage()
            groups[identifier] = storage
            return storage
        }
    }

    open var cookieAcceptPolicy: HTTPCookie.AcceptPolicy {
        get { cookieJar.acceptPolicy }
        set { cookieJar.acceptPolicy = newValue }
    }

    /// Every cookie not expired, oldest first.
    open var cookies: [HTTPCookie]? { cookieJar.cookies }

    /// The cookies a request to `url` sends.
    open func cookies(for url: URL) -> [HTTPCookie]? { cookieJar.cookies(for: url) }

    /// Stores `cookie`, unless no response could have set it (a Domain that
    /// is a public suffix, such as `.com`).
    open func setCookie(_ cookie: HTTPCookie) { cookieJar.setCookie(cookie) }

    open func deleteCookie(_ cookie: HTTPCookie) { cookieJar.deleteCookie(cookie) }

    open func removeCookies(since date: Date) { cookieJar.removeCookies(since: date) }

    /// Stores `cookies` as a response from `url` would: under the accept
    /// policy (`mainDocumentURL` for `.onlyFromMainDocumentDomain`), and only
    /// those `url` may set (no Domain that is a public suffix or another
    /// site's; see `CookieJar.setCookies(_:for:mainDocumentURL:)`).
    open func setCookies(_ cookies: [HTTPCookie], for url: URL?, mainDocumentURL: URL?) {
        cookieJar.setCookies(cookies, for: url, mainDocumentURL: mainDocumentURL)
    }

    open func storeCookies(_ cookies: [HTTPCookie], for task: URLSessionTask) {
        setCookies(cookies, for: task.currentRequest?.url, mainDocumentURL: task.currentRequest?.mainDocumentURL)
    }

    open func getCookiesFor(_ task: URLSessionTask, completionHandler: @escaping @Sendable ([HTTPCookie]?) -> Void) {
        completionHandler(task.currentRequest?.url.flatMap { cookies(for: $0) })
    }
}
