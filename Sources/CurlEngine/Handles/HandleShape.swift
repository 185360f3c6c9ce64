import Foundation

/// The options a transfer sets on its easy handle that are the same for every
/// transfer of that kind: method, how the body is sent, encodings, timeouts, trust,
/// TLS versions, public-key pins, client certificates.
///
/// Why: `curl_easy_reset` and a full set of options per request cost about a
/// dozen allocations (libcurl copies every string option, frees its receive
/// buffer on reset and allocates it again at the next connect). A recycled
/// handle whose last transfer had the same shape already holds every one of
/// these options, so only the per-transfer ones (URL, pointers, headers, body
/// length) are set again. Anything else gets a full reset first, so no option
/// of an earlier transfer can leak into a different kind of request (sticky
/// methods: CVE-2022-32221). Transfers with credentials are never reused this
/// way: libcurl keeps per-handle authentication state between transfers.
/// Nor are transfers with a server-trust check (rare, and their callback
/// must not outlive them).
///
/// A class made once per reset handle, and compared with each new request
/// directly: a struct made per request and compared with the shapes of the
/// idle handles was copied out of each handle it was compared with,
/// retaining its strings (about 15 retains per request).
final class HandleShape {
    let method: String
    let body: BodyKind
    let usesTLS: Bool
    let acceptEncoding: String?
    let userAgent: String?
    let idleTimeout: Double
    let connectTimeout: Double
    let resourceTimeout: Double
    let trustRootsPEM: Data?
    let tlsVersions: TLSVersionBounds
    let pinnedPublicKey: String?
    let clientCertificate: ClientCertificate?
    let proxy: ProxyRoute?
    /// Its options (RESOLVE, CONNECT_TO, UNIX_SOCKET_PATH, INTERFACE, ...)
    /// stay on the handle until a reset, so a handle that held one serves
    /// only transfers with an equal route.
    let route: ConnectRoute?

    /// Nil for a request whose handle must always start from a reset.
    init?(_ request: TransferRequest) {
        guard Self.isReusable(request) else { return nil }
        method = request.method
        body = BodyKind(request.body)
        usesTLS = Self.usesTLS(request)
        acceptEncoding = request.acceptEncoding
        userAgent = request.userAgent
        idleTimeout = request.idleTimeout
        connectTimeout = request.connectTimeout
        resourceTimeout = request.resourceTimeout
        trustRootsPEM = request.trustRootsPEM
        tlsVersions = request.tlsVersions
        pinnedPublicKey = request.pinnedPublicKey
        clientCertificate = request.clientCertificate
        proxy = request.proxy
        route = request.route
    }

    /// Whether a handle of this shape holds every shape option `request` needs.
    func matches(_ request: TransferRequest) -> Bool {
        Self.isReusable(request) && method == request.method && body == BodyKind(request.body)
            && usesTLS == Self.usesTLS(request) && acceptEncoding == request.acceptEncoding
            && userAgent == request.userAgent && idleTimeout == request.idleTimeout
            && connectTimeout == request.connectTimeout
            && resourceTimeout == request.resourceTimeout && trustRootsPEM == request.trustRootsPEM
            && tlsVersions == request.tlsVersions && pinnedPublicKey == request.pinnedPublicKey
            && clientCertificate == request.clientCertificate && proxy == request.proxy
            && route == request.route
    }

    /// False for a request whose handle must always start from a reset.
    static func isReusable(_ request: TransferRequest) -> Bool {
        // A server-trust check installs a TLS callback that must not stay on
        // the handle for a later transfer.
        // Nor proxy credentials: libcurl keeps proxy authentication state too.
        request.authentication == nil && request.tlsChallenges == nil && request.proxy?.user == nil
            && !request.connectOnly && !sendsTrailers(request)
    }

    /// A body with trailers sets a trailer callback and HTTP/1.1, which must
    /// not stay on the handle for a later transfer.
    private static func sendsTrailers(_ request: TransferRequest) -> Bool {
        if case .stream(let stream, _) = request.body { return stream.sendsTrailers }
        return false
    }

    /// How the handle's options send a body: none; from memory
    /// (CURLOPT_POSTFIELDS, a progress callback, no read callback); or
    /// through the read and seek callbacks (files and streams). A handle
    /// set up for one never serves another: POSTFIELDS, once cleared,
    /// would leave a handle with no read callback to read from.
    enum BodyKind: UInt8 {
        case none, memory, readCallback

        init(_ body: TransferRequest.Body) {
            switch body {
            case .none: self = .none
            case .data: self = .memory
            case .file, .stream: self = .readCallback
            }
        }
    }

    private static func usesTLS(_ request: TransferRequest) -> Bool {
        request.url.hasPrefixIgnoringASCIICase("https:")
    }
}
