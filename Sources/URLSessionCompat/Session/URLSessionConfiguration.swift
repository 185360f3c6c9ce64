import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// How a session behaves, as Apple's `URLSessionConfiguration`: a class whose
/// `copy()` is independent, and which a session copies when it is created.
///
/// The properties the core acts on are listed first. The rest are accepted so
/// that legacy code compiles, and documented where they have no effect here.
open class URLSessionConfiguration: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: every stored property lives in `storage`, behind a lock.
    private let storage: Mutex<Storage>

    // @unchecked: besides Sendable values it holds `Any` dictionaries and
    // Foundation stores (URLCache, HTTPCookieStorage) that are not Sendable.
    // They are only read or replaced under the lock, never mutated through
    // the configuration; the stores themselves are thread-safe classes.
    struct Storage: @unchecked Sendable {
        var core: SessionConfiguration
        var identifier: String?
        var requestCachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy
        var networkServiceType: URLRequest.NetworkServiceType = .default
        var allowsCellularAccess = true
        var allowsExpensiveNetworkAccess = true
        var allowsConstrainedNetworkAccess = true
        var waitsForConnectivity = false
        var isDiscretionary = false
        var connectionProxyDictionary: [AnyHashable: Any]?
        var httpShouldUsePipelining = false
        var httpShouldSetCookies = true
        var httpCookieAcceptPolicy: HTTPCookie.AcceptPolicy = .onlyFromMainDocumentDomain
        var httpCookieStorage: HTTPCookieStorage?
        var urlCredentialStorage: URLCredentialStorage?
        var urlCache: URLCache?
        var httpAdditionalHeaders: [AnyHashable: Any]?
    }

    init(core: SessionConfiguration) {
        storage = Mutex(Storage(core: core))
        super.init()
    }

    private init(storage: Storage) {
        self.storage = Mutex(storage)
        super.init()
    }

    /// A new configuration each time: persistent storage.
    open class var `default`: URLSessionConfiguration {
        let configuration = URLSessionConfiguration(core: .default)
        configuration.urlCredentialStorage = .shared
        return configuration
    }

    /// A new configuration each time: nothing is written to disk.
    open class var ephemeral: URLSessionConfiguration {
        URLSessionConfiguration(core: .ephemeral)
    }

    open override func copy() -> Any { copy(with: nil) }

    open func copy(with zone: NSZone? = nil) -> Any {
        URLSessionConfiguration(storage: storage.withLock { $0 })
    }

    /// One stored property, read or written under the lock.
    private subscript<Value>(_ path: WritableKeyPath<Storage, Value>) -> Value {
        // The whole (Sendable) storage leaves the lock, not a generic value.
        get { storage.withLock { $0 }[keyPath: path] }
        set { storage.withLock { $0[keyPath: path] = newValue } }
    }

    /// The core configuration this one stands for (the async core's value type).
    public var sessionConfiguration: SessionConfiguration {
        get {
            storage.withLock { storage in
                var core = storage.core
                core.httpAdditionalHeaders = Self.stringHeaders(storage.httpAdditionalHeaders)
                return core
            }
        }
        set { self[\.core] = newValue }
    }

    /// NSString and NSNumber values, as Apple accepts them, become strings.
    private static func stringHeaders(_ headers: [AnyHashable: Any]?) -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in headers ?? [:] {
            result["\(name.base)"] = "\(value)"
        }
        return result
    }

    // MARK: - Acted on by the core

    open var identifier: String? {
        get { self[\.identifier] }
        set { self[\.identifier] = newValue }
    }

    /// Headers added to every request that does not set them itself. Checked
    /// like any header: CR, LF or NUL fail the task before anything is sent.
    open var httpAdditionalHeaders: [AnyHashable: Any]? {
        get { self[\.httpAdditionalHeaders] }
        set { self[\.httpAdditionalHeaders] = newValue }
    }

    /// Idle seconds between bytes before `URLError(.timedOut)`.
    open var timeoutIntervalForRequest: TimeInterval {
        get { self[\.core.timeoutIntervalForRequest] }
        set { self[\.core.timeoutIntervalForRequest] = newValue }
    }

    /// Seconds a whole transfer may take.
    open var timeoutIntervalForResource: TimeInterval {
        get { self[\.core.timeoutIntervalForResource] }
        set { self[\.core.timeoutIntervalForResource] = newValue }
    }

    open var httpMaximumConnectionsPerHost: Int {
        get { self[\.core.httpMaximumConnectionsPerHost] }
        set { self[\.core.httpMaximumConnectionsPerHost] = newValue }
    }

    /// Consulted when a challenge is left to default handling: its default
    /// credential for the protection space is used. `.shared` for `default`.
    open var urlCredentialStorage: URLCredentialStorage? {
        get { self[\.urlCredentialStorage] }
        set { self[\.urlCredentialStorage] = newValue }
    }

    // MARK: - Extensions of this library (not in Apple's API)

    /// Redirects followed before `URLError(.httpTooManyRedirects)` (16).
    public var httpMaximumRedirects: Int {
        get { self[\.core.httpMaximumRedirects] }
        set { self[\.core.httpMaximumRedirects] = newValue }
    }

    /// Whether an https to http redirect is followed when the delegate does
    /// not decide (off).
    public var followsInsecureRedirects: Bool {
        get { self[\.core.followsInsecureRedirects] }
        set { self[\.core.followsInsecureRedirects] = newValue }
    }

    /// PEM certificates trusted instead of the system's bundle (private CAs,
    /// test servers). There are no server-trust challenges: use this.
    public var tlsTrustRootsPEM: Data? {
        get { self[\.core.tlsTrustRootsPEM] }
        set { self[\.core.tlsTrustRootsPEM] = newValue }
    }

    /// Where download tasks write their files.
    public var downloadDirectory: URL? {
        get { self[\.core.downloadDirectory] }
        set { self[\.core.downloadDirectory] = newValue }
    }

    /// The largest body a completion handler or `data(for:)` gets in memory.
    public var maximumCollectedBodySize: Int {
        get { self[\.core.maximumCollectedBodySize] }
        set { self[\.core.maximumCollectedBodySize] = newValue }
    }

    // MARK: - Accepted, no effect here (see MIGRATION.md)

    /// No response cache exists yet: every request goes to the network, as
    /// with `.reloadIgnoringLocalCacheData`.
    open var requestCachePolicy: URLRequest.CachePolicy {
        get { self[\.requestCachePolicy] }
        set { self[\.requestCachePolicy] = newValue }
    }

    /// Not consulted: no response cache exists yet.
    open var urlCache: URLCache? {
        get { self[\.urlCache] }
        set { self[\.urlCache] = newValue }
    }

    /// Not consulted: no cookie jar exists yet; Cookie headers you set are sent.
    open var httpCookieStorage: HTTPCookieStorage? {
        get { self[\.httpCookieStorage] }
        set { self[\.httpCookieStorage] = newValue }
    }

    open var httpShouldSetCookies: Bool {
        get { self[\.httpShouldSetCookies] }
        set { self[\.httpShouldSetCookies] = newValue }
    }

    open var httpCookieAcceptPolicy: HTTPCookie.AcceptPolicy {
        get { self[\.httpCookieAcceptPolicy] }
        set { self[\.httpCookieAcceptPolicy] = newValue }
    }

    /// libcurl multiplexes over HTTP/2 instead; HTTP/1.1 pipelining is off.
    open var httpShouldUsePipelining: Bool {
        get { self[\.httpShouldUsePipelining] }
        set { self[\.httpShouldUsePipelining] = newValue }
    }

    /// Not consulted: proxies are off (libcurl's environment proxies too).
    open var connectionProxyDictionary: [AnyHashable: Any]? {
        get { self[\.connectionProxyDictionary] }
        set { self[\.connectionProxyDictionary] = newValue }
    }

    /// Linux has no such network classes.
    open var networkServiceType: URLRequest.NetworkServiceType {
        get { self[\.networkServiceType] }
        set { self[\.networkServiceType] = newValue }
    }

    open var allowsCellularAccess: Bool {
        get { self[\.allowsCellularAccess] }
        set { self[\.allowsCellularAccess] = newValue }
    }

    open var allowsExpensiveNetworkAccess: Bool {
        get { self[\.allowsExpensiveNetworkAccess] }
        set { self[\.allowsExpensiveNetworkAccess] = newValue }
    }

    open var allowsConstrainedNetworkAccess: Bool {
        get { self[\.allowsConstrainedNetworkAccess] }
        set { self[\.allowsConstrainedNetworkAccess] = newValue }
    }

    /// Tasks fail at once with `cannotConnectToHost` when there is no route.
    open var waitsForConnectivity: Bool {
        get { self[\.waitsForConnectivity] }
        set { self[\.waitsForConnectivity] = newValue }
    }

    open var isDiscretionary: Bool {
        get { self[\.isDiscretionary] }
        set { self[\.isDiscretionary] = newValue }
    }
}
