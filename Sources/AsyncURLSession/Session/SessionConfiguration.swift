import Foundation
public import Logging
public import Metrics
public import Tracing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a `Session` behaves, as `URLSessionConfiguration` does, but as a value:
/// a session copies its configuration when it is created, so changing this
/// value afterwards changes nothing in that session.
public struct SessionConfiguration: Sendable {
    /// Persistent storage (cookies, cache, credentials as they arrive).
    public static var `default`: SessionConfiguration { SessionConfiguration(kind: .default) }
    /// Nothing written to disk; storage lives and dies with the session.
    public static var ephemeral: SessionConfiguration { SessionConfiguration(kind: .ephemeral) }

    public enum Kind: Sendable, Equatable {
        case `default`
        case ephemeral
    }

    public let kind: Kind

    /// Headers added to every request that does not set them itself. Those
    /// named in `sensitiveHeaderNames` are added only to requests for the
    /// origin a task was made for, never after a redirect to another one.
    public var httpAdditionalHeaders: [String: String] = [:]

    /// Header names (any case) that never follow a redirect to another
    /// origin (scheme, host or port): not from the request, not from
    /// `httpAdditionalHeaders`. Authorization, Proxy-Authorization and Cookie
    /// are always among them; add your own (an API key header, say).
    public var sensitiveHeaderNames: Set<String> {
        get { Self.alwaysSensitive.union(extraSensitiveHeaderNames) }
        set { extraSensitiveHeaderNames = Set(newValue.map { $0.lowercased() }).subtracting(Self.alwaysSensitive) }
    }

    private var extraSensitiveHeaderNames: Set<String> = []
    private static let alwaysSensitive: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// `lowercasedName` must be lowercased.
    func isSensitiveHeader(_ lowercasedName: String) -> Bool {
        Self.alwaysSensitive.contains(lowercasedName) || extraSensitiveHeaderNames.contains(lowercasedName)
    }

    /// Seconds a transfer may go without sending or receiving a byte before
    /// it fails with `URLError(.timedOut)`. A request's own `timeoutInterval`
    /// wins when it differs from URLRequest's default (60 s).
    public var timeoutIntervalForRequest: TimeInterval = 60

    /// Seconds a whole transfer may take, pauses included, before it fails
    /// with `URLError(.timedOut)`. Default: 7 days, as URLSession.
    public var timeoutIntervalForResource: TimeInterval = 7 * 24 * 60 * 60
    /// Seconds to connect (DNS, TCP, a proxy's tunnel, TLS) before the
    /// attempt fails with `.timedOut`; nil (the default): the request
    /// timeout, as URLSession. Shorter than the request timeout, it gives
    /// up on an unreachable host early while a slow response may still take
    /// its time (and a `retryPolicy` retries it). Longer, it is bounded by
    /// the request timeout: connecting is idle time too.
    public var timeoutIntervalForConnect: TimeInterval?

    /// Try HTTP/3 first for https requests, as Apple's
    /// `URLRequest.assumesHTTP3Capable` says of one request, falling back
    /// to HTTP/2 or HTTP/1.1; default sessions keep an Alt-Svc cache beside
    /// their cookies, so servers that announce h3 get it next time. Only
    /// where the linked libcurl has HTTP/3 (`NetworkLibrary.supportsHTTP3`;
    /// Debian 12's has none): without it requests go out as before and the
    /// session's log says why, once. Metrics name the protocol ("h3").
    public var assumesHTTP3Capable = false

    /// Connections open at once to one host (HTTP/1.1); further requests wait
    /// for a free connection. HTTP/2 multiplexes on one connection instead
    /// (one per I/O thread when more than 16 requests are in flight).
    public var httpMaximumConnectionsPerHost: Int = 6

    /// Redirects followed before a task fails with `URLError(.httpTooManyRedirects)`.
    public var httpMaximumRedirects: Int = 16

    /// Whether a redirect from https to http is followed by default. Off: such
    /// a redirect becomes the task's result unless a handler answers `follow`.
    public var followsInsecureRedirects: Bool = false

    /// Where download tasks write their files (created 0700, files 0600).
    /// Default: a per-user folder in the temporary directory, so resume data
    /// works across sessions and processes. Files of ours in it that nothing
    /// has written for a day (partial downloads whose resume data was never
    /// used, finished ones never moved away) are removed by the next
    /// download that uses the folder.
    public var downloadDirectory: URL?

    /// PEM certificates trusted INSTEAD of the system's bundle, for private
    /// CAs and test servers. Verification stays on: hosts must still match.
    public var tlsTrustRootsPEM: Data?

    /// Public-key pins per host: an https connection to a listed host (by
    /// name as written in the URL, case-insensitively) must present a
    /// certificate whose public key (its SubjectPublicKeyInfo, DER) has one
    /// of these SHA-256 digests, base64 (`openssl x509 -pubkey | openssl
    /// pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`;
    /// a `sha256//` prefix is accepted). Checked after normal verification,
    /// which stays on; a mismatch fails the task with
    /// `URLError(.serverCertificateUntrusted)` naming the host. List the
    /// next key too before rotating one. Hosts not listed are not pinned.
    public var pinnedPublicKeys: [String: [String]] = [:]

    /// The client certificate sent to every https server that asks for one
    /// (mutual TLS). Part of the connection's identity: connections made
    /// with another identity, or none, are never reused for these
    /// requests. Without it, a server that requires one ends the
    /// connection; the task fails with `.clientCertificateRequired` when
    /// the server's alert arrived (OpenSSL may see only the closed
    /// connection: `.networkConnectionLost`).
    public var clientIdentity: ClientIdentity?

    /// The lowest and highest TLS versions an https connection may use; nil
    /// leaves OpenSSL's bound (on Debian 12: TLS 1.2 to 1.3). A minimum above
    /// the maximum fails every https task with a clear error.
    public var tlsMinimumSupportedVersion: TLSVersion?
    public var tlsMaximumSupportedVersion: TLSVersion?

    /// How many times the bytes received a compressed body (gzip, deflate,
    /// br, zstd) may decode to, once it has decoded to more than
    /// `decompressionLimitFloor` bytes; past that the task fails with
    /// `URLError(.cannotDecodeContentData)`, as a decompression bomb. For
    /// every kind of task and consumer. 0 turns the check off.
    public var maximumDecompressionRatio: Int = 100
    /// Decoded bytes any compressed body may reach before the ratio applies.
    public var decompressionLimitFloor: Int = 8 << 20

    /// The largest body `data(for:)` collects in memory before it fails with
    /// `URLError(.dataLengthExceedsMaximum)`. Stream `events` or use `bytes(for:)`
    /// for bigger bodies.
    public var maximumCollectedBodySize: Int = 1 << 30

    /// Body bytes buffered for a consumer that does not keep up before the
    /// transfer pauses (and below which it resumes). Memory per task is
    /// bounded by the high mark plus one 16 KiB chunk (more on HTTP/2, where a
    /// paused stream's window is buffered by libcurl: up to 32 MiB).
    public var streamBufferHighWatermark: Int = 1 << 20
    public var streamBufferLowWatermark: Int = 64 << 10

    /// Where responses store cookies and requests find them: `CookieJar.shared`
    /// for `.default`, a jar of the configuration's own for `.ephemeral`
    /// (sessions made from one ephemeral configuration value share it), nil
    /// for no cookies at all.
    public var cookieJar: CookieJar?

    /// Whether requests send the jar's cookies and responses store theirs
    /// (a request's own `httpShouldHandleCookies = false` opts it out too).
    /// A Cookie header the request sets itself is sent as given instead.
    public var httpShouldSetCookies = true

    /// Which responses may store cookies (Apple's default: only from the
    /// main document's domain, which lets everything in when a request has
    /// no `mainDocumentURL`, as URLSession requests usually do not).
    public var httpCookieAcceptPolicy: HTTPCookie.AcceptPolicy = .onlyFromMainDocumentDomain

    /// Where challenges find credentials by default handling and answers
    /// with `.permanent` persistence are kept: `CredentialStorage.shared`
    /// for `.default` (on disk), a storage of the configuration's own for
    /// `.ephemeral` (memory), nil for none. (`.forSession` answers are kept
    /// by the session itself.)
    public var credentialStorage: CredentialStorage?

    /// Where GET responses are kept and found again (RFC 9111, a private
    /// cache): `ResponseCache.shared` for `.default` (memory and disk), a
    /// memory-only cache of the configuration's own for `.ephemeral`, nil
    /// for none. See `requestCachePolicy` and URLRequest's `cachePolicy`.
    public var responseCache: ResponseCache?

    /// Where the session's tasks log (swift-log): start and end at debug
    /// level, hops, responses and decisions at trace level, each line with
    /// the task's `request-id`; credentials, cookies and URL passwords are
    /// redacted. nil (the default): no logging, at no cost.
    public var logger: Logger?

    /// The tracer of this session's tasks (swift-distributed-tracing): each
    /// task makes a span (the logical operation) with an HTTP client span
    /// per request it sends beneath it, and trace headers naming that
    /// client span go out with each request. nil (the default): the one bootstrapped with
    /// `InstrumentationSystem.bootstrap`, if any. With neither, tasks make
    /// no span and inject nothing, at no cost. Set for tests, or to trace
    /// one session with a tracer of its own. See "Tracing and metrics" in
    /// the README for the spans' attributes and events.
    public var tracer: (any Tracer)?

    /// Whether trace headers also go to a hop whose origin (scheme, host,
    /// port) is not the task's request's, after a redirect. false (the
    /// default): only to the original origin, so a redirect to a third
    /// party learns nothing of the caller's trace.
    public var propagatesTraceContextAcrossOrigins: Bool = false

    /// The metrics factory of this session's tasks (swift-metrics), with
    /// OpenTelemetry's HTTP client metrics: `http.client.request.duration`,
    /// `http.client.active_requests`, `http.client.request.body.size` and
    /// `http.client.response.body.size` per request sent; and of its
    /// connection pool: `http.client.open_connections` and
    /// `http.client.connection.duration`. nil (the default): the one
    /// bootstrapped with `MetricsSystem.bootstrap`, if any, read when the
    /// session is made and again when each task is made (a session made
    /// before the bootstrap gets its pool meters at its first task after
    /// it). With neither, tasks make no metric and the pool counts nothing,
    /// at no cost. See "Tracing and metrics" in the README for every name.
    public var metricsFactory: (any MetricsFactory)?

    /// The first part of the labels of the library's own metrics, those
    /// OpenTelemetry's conventions have no name for: `asyncurlsession`
    /// makes `asyncurlsession.cache.hits` and
    /// `asyncurlsession.requests.waiting_for_connection`. The conventions'
    /// instruments (`http.client.*`) keep their names whatever it is.
    public var metricsPrefix: String = "asyncurlsession"

    /// Whether request metrics carry `server.address` and `server.port`
    /// (the request's host and port; the pool meters never do, as libcurl
    /// does not name a connection's server). The conventions list them as
    /// required; false (the default) leaves them out so that a client of
    /// many hosts does not make time series per host: method, scheme,
    /// status code, error type and protocol version only.
    public var metricsIncludeHost: Bool = false

    /// Writes the session's traffic to a HAR 1.2 file, one entry per hop,
    /// each written when its task ends (see `HARRecorder`). nil (the
    /// default): nothing is recorded, at no cost.
    public var harRecorder: HARRecorder?

    /// Answers the requests it chooses without the network (nil: every
    /// request goes to the network). For tests: `StubTransport` of the
    /// `AsyncURLSessionTesting` product. See `LocalTransport`.
    public var localTransport: (any LocalTransport)?

    /// The cache policy of requests that leave theirs at
    /// `.useProtocolCachePolicy` (URLRequest's default).
    public var requestCachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy

    /// Whether a task that cannot reach its server (no route, refused,
    /// name not found) waits and retries, with growing pauses up to 5 s,
    /// until `timeoutIntervalForResource` instead of failing at once. It
    /// tells its consumer once (`.waitingForConnectivity`, a handler's
    /// `taskIsWaitingForConnectivity`). Off by default, as on Apple.
    public var waitsForConnectivity: Bool = false

    /// When tasks send their request again by themselves (see
    /// `RetryPolicy`): after a failure before any response, or a 429/503,
    /// for requests that are safe to repeat. nil (the default): never, as
    /// URLSession. A task's own `SessionTask.retryPolicy` starts as this.
    public var retryPolicy: RetryPolicy?

    /// Interceptors around every task's requests and responses, in order
    /// (see `RequestMiddleware`); a task's own (`SessionTask.middleware`)
    /// run inside these. None by default, and none costs nothing.
    public var middleware: [any RequestMiddleware] = []

    /// For the classic adapter: FoundationNetworking's redirect rules (305
    /// and 306 followed as 307, a 303 turns HEAD into GET too) instead of
    /// RFC 9110's and fetch's, so code written against it behaves the same.
    @_spi(Adapters) public var redirectsAsFoundationNetworking = false

    /// The hosts reached only over https (HSTS): learned from https
    /// responses, applied to every hop before it is sent. `.default`:
    /// `HSTSStore.shared` (on disk); `.ephemeral`: a store in memory of its
    /// own; nil: no HSTS.
    public var hstsStore: HSTSStore?

    /// The proxies requests go through; nil (the default): straight to the
    /// origin. The environment's proxy variables are read only when you
    /// ask: `proxy = .fromEnvironment()`.
    public var proxy: ProxyConfiguration?

    /// Where connections for a host and port go instead of the URL's
    /// (curl's `--resolve` and `--connect-to`), while the request, SNI and
    /// certificate verification stay for the URL's name. Empty (the
    /// default): none, at no cost. See `HostOverride`.
    public var hostOverrides: [HostOverride] = []

    /// A Unix domain socket every request of the session goes over instead
    /// of TCP (the URL's host is then only a name: Host header, TLS name,
    /// storage keys); nil (the default): TCP. A request's `http+unix://`
    /// URL or `SessionTask.unixSocket` wins. See `UnixSocket`.
    public var unixSocket: UnixSocket?

    /// The interface or local address connections are made from; nil (the
    /// default): the system's choice.
    public var localEndpoint: LocalEndpoint?

    /// Which IP versions connections may use (`.any`, the default; `.v4Only`,
    /// `.v6Only`).
    public var ipVersion: IPVersionPolicy = .any

    /// How long a connection attempt over the first IP version runs before
    /// one over the other starts beside it (Happy Eyeballs, RFC 8305); nil
    /// (the default): libcurl's 200 ms.
    public var happyEyeballsDelay: TimeInterval?

    /// Whether new TLS connections offer TLS challenges before a byte of the
    /// request is sent, to the task's handler, the session's, then
    /// `task.events`:
    /// - server trust, for each new connection: a `ChallengeDecision` whose
    ///   `serverTrust` holds the chain and default verification's verdict;
    ///   `URLCredential(trust:)` trusts it.
    /// - a client certificate, when the server asks for one and none is set
    ///   (`clientIdentity`): `URLCredential(identity:)` presents one.
    ///
    /// A task can set its own (`SessionTask.offersTLSChallenges`). Off by
    /// default: each challenge costs one more TLS handshake (the first one
    /// records what is asked and stops, the answer goes into the next; see
    /// the README). Reused connections are not asked again, as on Apple's
    /// platforms.
    public var offersTLSChallenges: Bool = false

    /// A background session's identifier (`background(identifier:)`); nil
    /// for any other session.
    public private(set) var backgroundIdentifier: String?

    /// A configuration whose tasks run in the per-user transfer agent
    /// (`asyncurlsession-agent`, or this program started again as the agent:
    /// see `backgroundAgentPath`; started on demand), so they go
    /// on when this program exits, crashes or is killed. A session made
    /// with it again, in this program or the next, reconnects: the tasks an
    /// earlier program left come as `Session.backgroundEvents`. One program
    /// at a time may hold an identifier. Storage is the default
    /// configuration's (shared cookie jar, credentials, cache).
    ///
    /// The rules of background sessions: http and https only; redirects
    /// always followed (by the agent); request bodies from files only
    /// (`uploadTask(with:fromFile:)`); transfers that fail on the network
    /// are tried again with backoff until `timeoutIntervalForResource`.
    public static func background(identifier: String) -> SessionConfiguration {
        var configuration = SessionConfiguration(kind: .default)
        configuration.backgroundIdentifier = identifier
        return configuration
    }

    /// The transfer agent program a background session starts when none
    /// runs. nil: `ASYNCURLSESSION_AGENT`, else `asyncurlsession-agent`
    /// beside this program (where `swift build` puts it), else on the PATH,
    /// else this program itself, started again as the agent (a program on
    /// the AsyncURLSession or URLSessionCompat product links the agent).
    public var backgroundAgentPath: String?

    /// Background sessions: the agent runs these transfers only while none
    /// of the user's other transfers runs (as Apple's, at the system's
    /// convenience). Other sessions: no effect.
    public var isDiscretionary: Bool = false

    /// The agent's folder (tests: an agent of their own); nil: the user's,
    /// `$XDG_RUNTIME_DIR/AsyncURLSession` (else a 0700 folder in /tmp).
    package var backgroundAgentFolder: URL?

    public init(kind: Kind = .default) {
        self.kind = kind
        cookieJar = kind == .default ? CookieJar.shared : CookieJar()
        hstsStore = kind == .default ? HSTSStore.shared : HSTSStore()
        credentialStorage = kind == .default ? CredentialStorage.shared : CredentialStorage()
        responseCache = kind == .default ? ResponseCache.shared : ResponseCache(memoryCapacity: 4 << 20)
    }
}

/// A TLS protocol version, for `SessionConfiguration`'s TLS bounds.
public enum TLSVersion: Int, Sendable, Comparable, CaseIterable {
    case v1_0, v1_1, v1_2, v1_3

    public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool { lhs.rawValue < rhs.rawValue }
}
