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

    // @unchecked: besides Sendable values it holds `Any` dictionaries,
    // protocol class lists and Foundation stores (URLCache,
    // HTTPCookieStorage) that are not Sendable.
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
        var isDiscretionary = false
        var connectionProxyDictionary: [AnyHashable: Any]?
        var httpShouldUsePipelining = false
        var httpShouldSetCookies = true
        var httpCookieAcceptPolicy: HTTPCookie.AcceptPolicy = .onlyFromMainDocumentDomain
        var httpCookieStorage: HTTPCookieStorage?
        var urlCredentialStorage: URLCredentialStorage?
        var urlCache: URLCache?
        var httpAdditionalHeaders: [AnyHashable: Any]?
        var sharedContainerIdentifier: String?
        var protocolClasses: [AnyClass]?
        var multipathServiceType: MultipathServiceType = .none
        var allowsUltraConstrainedNetworkAccess = true
        var requiresDNSSECValidation = false
        var sessionSendsLaunchEvents = true
        var shouldUseExtendedBackgroundIdleMode = false
        var usesClassicLoadingMode = true
        var enablesEarlyData = false
    }

    init(core: SessionConfiguration) {
        var initial = Storage(core: core)
        initial.httpCookieStorage = core.cookieJar.map { $0 === CookieJar.shared ? .shared : HTTPCookieStorage(cookieJar: $0) }
        initial.urlCredentialStorage = core.credentialStorage.map {
            $0 === CredentialStorage.shared ? .shared : URLCredentialStorage(credentialStorage: $0)
        }
        initial.urlCache = core.responseCache.map { $0 === ResponseCache.shared ? .shared : URLCache(responseCache: $0) }
        initial.requestCachePolicy = core.requestCachePolicy
        storage = Mutex(initial)
        super.init()
    }

    private init(storage: Storage) {
        self.storage = Mutex(storage)
        super.init()
    }

    /// A new configuration each time: persistent storage.
    open class var `default`: URLSessionConfiguration {
        URLSessionConfiguration(core: .default)
    }

    /// A new configuration each time: nothing is written to disk.
    open class var ephemeral: URLSessionConfiguration {
        URLSessionConfiguration(core: .ephemeral)
    }

    /// A new configuration each time: a background session's, whose tasks
    /// run in the per-user transfer agent and go on after this program
    /// exits (see `SessionConfiguration.background(identifier:)`). A
    /// session made with it again, here or in the next program, gets the
    /// tasks left running or ended meanwhile back through its delegate,
    /// then `urlSessionDidFinishEvents(forBackgroundURLSession:)`.
    open class func background(withIdentifier identifier: String) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration(core: .background(identifier: identifier))
        configuration.identifier = identifier
        return configuration
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
                core.httpShouldSetCookies = storage.httpShouldSetCookies
                core.httpCookieAcceptPolicy = storage.httpCookieAcceptPolicy
                core.cookieJar = storage.httpCookieStorage?.cookieJar
                core.credentialStorage = storage.urlCredentialStorage?.credentialStorage
                core.responseCache = storage.urlCache?.responseCache
                core.requestCachePolicy = storage.requestCachePolicy
                core.isDiscretionary = storage.isDiscretionary
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

    /// Seconds to connect before an attempt fails with `.timedOut`; nil
    /// (the default): `timeoutIntervalForRequest`, as Apple's. An addition
    /// of this adapter (see `SessionConfiguration.timeoutIntervalForConnect`).
    public var timeoutIntervalForConnect: TimeInterval? {
        get { self[\.core.timeoutIntervalForConnect] }
        set { self[\.core.timeoutIntervalForConnect] = newValue }
    }

    open var httpMaximumConnectionsPerHost: Int {
        get { self[\.core.httpMaximumConnectionsPerHost] }
        set { self[\.core.httpMaximumConnectionsPerHost] = newValue }
    }

    /// Where default handling finds a credential (the space's default one,
    /// else its only one) and `.permanent` answers are kept: `.shared` for
    /// `.default` (on disk), a storage of its own for `.ephemeral`, nil for
    /// none (this library's `URLCredentialStorage`).
    open var urlCredentialStorage: URLCredentialStorage? {
        get { self[\.urlCredentialStorage] }
        set { self[\.urlCredentialStorage] = newValue }
    }

    /// The lowest TLS version a connection may use (default `.TLSv12`, as
    /// Apple). DTLS versions do not apply to HTTP and are ignored.
    open var tlsMinimumSupportedProtocolVersion: tls_protocol_version_t {
        get { tls_protocol_version_t(self[\.core.tlsMinimumSupportedVersion]) ?? .TLSv12 }
        set { self[\.core.tlsMinimumSupportedVersion] = newValue.tlsVersion }
    }

    /// The highest TLS version a connection may use (default `.TLSv13`).
    open var tlsMaximumSupportedProtocolVersion: tls_protocol_version_t {
        get { tls_protocol_version_t(self[\.core.tlsMaximumSupportedVersion]) ?? .TLSv13 }
        set { self[\.core.tlsMaximumSupportedVersion] = newValue.tlsVersion }
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

    /// When tasks send their request again by themselves: after a failure
    /// before any response, or a 429/503, for requests safe to repeat (see
    /// `RetryPolicy`). nil (the default): never, as Apple's URLSession. An
    /// addition of this adapter; every attempt is a transaction of the
    /// task's metrics.
    public var retryPolicy: RetryPolicy? {
        get { self[\.core.retryPolicy] }
        set { self[\.core.retryPolicy] = newValue }
    }

    /// Interceptors around every task's requests and responses (see
    /// `RequestMiddleware`): sign a request, answer it, refresh a token on
    /// 401. An addition of this adapter; delegates and completion handlers
    /// see what the middleware let through.
    public var middleware: [any RequestMiddleware] {
        get { self[\.core.middleware] }
        set { self[\.core.middleware] = newValue }
    }

    /// Writes the session's traffic to a HAR 1.2 file, one entry per hop
    /// (each redirect and retry its own), written as each task ends, with
    /// secrets redacted (see `HARRecorder`). An addition of this adapter;
    /// nil (the default) records nothing. To replay a HAR in tests, set
    /// `sessionConfiguration.localTransport` to a `HARReplay`
    /// (AsyncURLSessionTesting).
    public var harRecorder: HARRecorder? {
        get { self[\.core.harRecorder] }
        set { self[\.core.harRecorder] = newValue }
    }

    /// A Unix domain socket every request goes over instead of TCP (the
    /// Docker Engine API's `/var/run/docker.sock`, say); see
    /// `SessionConfiguration.unixSocket`. An addition of this adapter, as
    /// are `http+unix://` URLs (the socket's percent-encoded path as host).
    public var unixSocket: UnixSocket? {
        get { self[\.core.unixSocket] }
        set { self[\.core.unixSocket] = newValue }
    }

    /// Where connections for a host and port go instead (curl's
    /// `--resolve`, `--connect-to`), names and TLS checks unchanged; see
    /// `SessionConfiguration.hostOverrides`. An addition of this adapter.
    public var hostOverrides: [HostOverride] {
        get { self[\.core.hostOverrides] }
        set { self[\.core.hostOverrides] = newValue }
    }

    /// The interface or local address connections are made from; see
    /// `SessionConfiguration.localEndpoint`. An addition of this adapter.
    public var localEndpoint: LocalEndpoint? {
        get { self[\.core.localEndpoint] }
        set { self[\.core.localEndpoint] = newValue }
    }

    /// Try HTTP/3 first for every https request, where the linked libcurl
    /// has it (Apple sets this per request, `URLRequest.assumesHTTP3Capable`,
    /// which corelibs' URLRequest lacks); see
    /// `SessionConfiguration.assumesHTTP3Capable`. An addition of this adapter.
    public var assumesHTTP3Capable: Bool {
        get { self[\.core.assumesHTTP3Capable] }
        set { self[\.core.assumesHTTP3Capable] = newValue }
    }

    /// IPv4 only, IPv6 only, or both; see `SessionConfiguration.ipVersion`.
    /// An addition of this adapter.
    public var ipVersion: IPVersionPolicy {
        get { self[\.core.ipVersion] }
        set { self[\.core.ipVersion] = newValue }
    }

    /// Public-key pins per host (SHA-256 of the certificate's
    /// SubjectPublicKeyInfo, base64), checked after normal verification;
    /// see `SessionConfiguration.pinnedPublicKeys`. An addition of this
    /// adapter: Apple pins through Info.plist's `NSPinnedDomains`.
    public var pinnedPublicKeys: [String: [String]] {
        get { self[\.core.pinnedPublicKeys] }
        set { self[\.core.pinnedPublicKeys] = newValue }
    }

    /// The client certificate presented to https servers that ask for one;
    /// see `SessionConfiguration.clientIdentity`. An addition of this
    /// adapter: Apple answers a client-certificate challenge with a
    /// keychain identity, which Linux does not have.
    public var clientIdentity: ClientIdentity? {
        get { self[\.core.clientIdentity] }
        set { self[\.core.clientIdentity] = newValue }
    }

    /// Header names that never follow a redirect to another origin, from
    /// the request or from `httpAdditionalHeaders`. Authorization,
    /// Proxy-Authorization and Cookie are always among them.
    public var sensitiveHeaderNames: Set<String> {
        get { self[\.core.sensitiveHeaderNames] }
        set { self[\.core.sensitiveHeaderNames] = newValue }
    }

    /// How many times the bytes received a compressed body may decode to
    /// (past 8 MiB) before the task fails with `.cannotDecodeContentData`, as
    /// a decompression bomb (100; 0 turns the check off).
    public var maximumDecompressionRatio: Int {
        get { self[\.core.maximumDecompressionRatio] }
        set { self[\.core.maximumDecompressionRatio] = newValue }
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

    // MARK: - Storage

    /// The policy of requests that leave theirs at `.useProtocolCachePolicy`.
    open var requestCachePolicy: URLRequest.CachePolicy {
        get { self[\.requestCachePolicy] }
        set { self[\.requestCachePolicy] = newValue }
    }

    /// Where responses are cached: `URLCache.shared` for `.default` (memory
    /// and disk), a memory-only cache of its own for `.ephemeral` (this
    /// library's `URLCache`, over an async core `ResponseCache`); nil turns
    /// caching off.
    open var urlCache: URLCache? {
        get { self[\.urlCache] }
        set { self[\.urlCache] = newValue }
    }

    /// Where cookies are kept: `HTTPCookieStorage.shared` for `.default`, a
    /// storage of its own for `.ephemeral` (this library's `HTTPCookieStorage`,
    /// over an async core `CookieJar`); nil turns cookies off.
    open var httpCookieStorage: HTTPCookieStorage? {
        get { self[\.httpCookieStorage] }
        set { self[\.httpCookieStorage] = newValue }
    }

    /// Whether requests send cookies and responses store them.
    open var httpShouldSetCookies: Bool {
        get { self[\.httpShouldSetCookies] }
        set { self[\.httpShouldSetCookies] = newValue }
    }

    open var httpCookieAcceptPolicy: HTTPCookie.AcceptPolicy {
        get { self[\.httpCookieAcceptPolicy] }
        set { self[\.httpCookieAcceptPolicy] = newValue }
    }

    // MARK: - Accepted, no effect here (see MIGRATION.md)

    /// libcurl multiplexes over HTTP/2 instead; HTTP/1.1 pipelining is off.
    open var httpShouldUsePipelining: Bool {
        get { self[\.httpShouldUsePipelining] }
        set { self[\.httpShouldUsePipelining] = newValue }
    }

    /// Apple's keys (`kCFNetworkProxiesHTTPEnable`, `...HTTPProxy`,
    /// `...HTTPPort`, the HTTPS and SOCKS ones, `...ExceptionsList`,
    /// `kCFProxyUsernameKey` / `kCFProxyPasswordKey`); nil: no proxy. The
    /// environment's proxy variables are used only through
    /// `proxyConfiguration = .fromEnvironment()` (an extension).
    open var connectionProxyDictionary: [AnyHashable: Any]? {
        get { self[\.connectionProxyDictionary] }
        set {
            storage.withLock { storage in
                storage.connectionProxyDictionary = newValue
                storage.core.proxy = newValue.flatMap(ProxyConfiguration.init(dictionary:))
            }
        }
    }

    /// The proxies as the async core takes them (an extension); setting it
    /// replaces what `connectionProxyDictionary` said.
    public var proxyConfiguration: ProxyConfiguration? {
        get { self[\.core.proxy] }
        set {
            storage.withLock { storage in
                storage.core.proxy = newValue
                storage.connectionProxyDictionary = newValue?.connectionProxyDictionary
            }
        }
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

    /// Whether a task that cannot reach its server waits and retries
    /// until `timeoutIntervalForResource` (telling the delegate's
    /// `urlSession(_:taskIsWaitingForConnectivity:)` once) instead of
    /// failing at once. Off by default, as on Apple.
    open var waitsForConnectivity: Bool {
        get { self[\.core.waitsForConnectivity] }
        set { self[\.core.waitsForConnectivity] = newValue }
    }

    /// Background sessions: their transfers run only while none of the
    /// user's other background transfers runs. No effect elsewhere.
    open var isDiscretionary: Bool {
        get { self[\.isDiscretionary] }
        set { self[\.isDiscretionary] = newValue }
    }

    /// App group containers are an Apple platform notion.
    open var sharedContainerIdentifier: String? {
        get { self[\.sharedContainerIdentifier] }
        set { self[\.sharedContainerIdentifier] = newValue }
    }

    /// `URLProtocol` subclasses that answer this configuration's requests
    /// they accept (`canInit(with:)`), consulted in order before the
    /// registered ones (`URLProtocol.registerClass`).
    open var protocolClasses: [AnyClass]? {
        get { self[\.protocolClasses] }
        set { self[\.protocolClasses] = newValue }
    }

    /// Multipath TCP is an iOS notion; connections use one path.
    open var multipathServiceType: MultipathServiceType {
        get { self[\.multipathServiceType] }
        set { self[\.multipathServiceType] = newValue }
    }

    open var allowsUltraConstrainedNetworkAccess: Bool {
        get { self[\.allowsUltraConstrainedNetworkAccess] }
        set { self[\.allowsUltraConstrainedNetworkAccess] = newValue }
    }

    /// Names are resolved by the system resolver, which does not report
    /// DNSSEC validation: setting this changes nothing.
    open var requiresDNSSECValidation: Bool {
        get { self[\.requiresDNSSECValidation] }
        set { self[\.requiresDNSSECValidation] = newValue }
    }

    /// No program is launched for a session's events on Linux.
    open var sessionSendsLaunchEvents: Bool {
        get { self[\.sessionSendsLaunchEvents] }
        set { self[\.sessionSendsLaunchEvents] = newValue }
    }

    /// Deprecated by Apple ("not supported"); kept so that code compiles.
    open var shouldUseExtendedBackgroundIdleMode: Bool {
        get { self[\.shouldUseExtendedBackgroundIdleMode] }
        set { self[\.shouldUseExtendedBackgroundIdleMode] = newValue }
    }

    /// Apple's switch between its classic and newer loading engines; there
    /// is one engine here.
    open var usesClassicLoadingMode: Bool {
        get { self[\.usesClassicLoadingMode] }
        set { self[\.usesClassicLoadingMode] = newValue }
    }

    /// TLS 1.3 early data is not sent: libcurl 7.88 has no option for it.
    open var enablesEarlyData: Bool {
        get { self[\.enablesEarlyData] }
        set { self[\.enablesEarlyData] = newValue }
    }

    /// Apple's multipath TCP modes (no effect here).
    public enum MultipathServiceType: Int, Sendable {
        case none = 0
        case handover = 1
        case interactive = 2
        case aggregate = 3
    }
}

/// TLS protocol versions under Apple's names (Security's `tls_protocol_version_t`),
/// for `tlsMinimumSupportedProtocolVersion` and `tlsMaximumSupportedProtocolVersion`.
public enum tls_protocol_version_t: UInt16, Sendable {
    case TLSv10 = 0x0301
    case TLSv11 = 0x0302
    case TLSv12 = 0x0303
    case TLSv13 = 0x0304
    case DTLSv10 = 0xFEFF
    case DTLSv12 = 0xFEFD

    /// The core's version; nil for DTLS, which HTTP does not use.
    var tlsVersion: TLSVersion? {
        switch self {
        case .TLSv10: return .v1_0
        case .TLSv11: return .v1_1
        case .TLSv12: return .v1_2
        case .TLSv13: return .v1_3
        case .DTLSv10, .DTLSv12: return nil
        }
    }

    init?(_ version: TLSVersion?) {
        switch version {
        case .v1_0?: self = .TLSv10
        case .v1_1?: self = .TLSv11
        case .v1_2?: self = .TLSv12
        case .v1_3?: self = .TLSv13
        case nil: return nil
        }
    }
}
