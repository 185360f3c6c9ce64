import Foundation

/// Everything the engine needs to perform one HTTP exchange, already validated
/// by the core (scheme, header names and values, method token).
///
/// A class of constants, not a struct: it travels from the core through the
/// command queue into the transfer, and each copy of a struct retained every
/// one of its ten reference fields (about 25 retains and as many releases
/// per request); a reference is retained once.
package final class TransferRequest: Sendable {
    package enum Body: Sendable {
        case none
        case data(Data)
        /// Read from disk as it is sent, never loaded whole.
        case file(URL)
        /// Produced while it is sent; chunked when the length is unknown.
        case stream(BodyStream, length: Int64?)
    }

    /// Credentials for one authentication method; libcurl runs that method's
    /// exchange (Digest's nonce round trip, NTLM's handshake) inside the transfer.
    package struct Authentication: Sendable {
        package enum Scheme: Sendable, Equatable {
            case basic, digest, ntlm, negotiate
        }
        package var user: String
        package var password: String
        package var scheme: Scheme

        package init(user: String, password: String, scheme: Scheme) {
            self.user = user
            self.password = password
            self.scheme = scheme
        }
    }

    package let url: String
    package let method: String
    /// Header lines as they go on the wire, in order. An empty value is sent as
    /// an empty header (libcurl's "Name;" form).
    package let headers: [(name: String, value: String)]
    package let body: Body
    /// Seconds without any byte in either direction before the transfer fails
    /// with `.timedOut` (URLSession's `timeoutIntervalForRequest`).
    package let idleTimeout: Double
    /// Whole-transfer limit (URLSession's `timeoutIntervalForResource`).
    package let resourceTimeout: Double
    /// Seconds to connect (TCP, proxy, TLS) before `.timedOut`; the idle
    /// timeout unless the configuration sets its own.
    package let connectTimeout: Double
    /// PEM certificates trusted instead of the system bundle, if set.
    package let trustRootsPEM: Data?
    /// The TLS versions an https transfer may negotiate.
    package let tlsVersions: TLSVersionBounds
    /// CURLOPT_PINNEDPUBLICKEY ("sha256//…;…"), or nil for no pin.
    package let pinnedPublicKey: String?
    /// Sent to an https server that asks for a client certificate.
    package let clientCertificate: ClientCertificate?
    /// Set when the task decides TLS challenges itself (https only).
    package let tlsChallenges: TLSChallengeCheck?
    /// The proxy to go through; nil: straight to the origin.
    package let proxy: ProxyRoute?
    /// Only connect (TCP, proxy tunnel, TLS), send nothing: the connection
    /// becomes a raw stream (`RawStreamDelegate`) when the transfer completes.
    package let connectOnly: Bool
    /// How far a compressed body may grow when decoded; nil: no limit.
    package let decompressionLimit: DecompressionLimit?
    /// The value for Accept-Encoding that libcurl both sends and decodes;
    /// "" means every encoding libcurl supports.
    package let acceptEncoding: String?
    /// Sent as User-Agent when `headers` has none. An option rather than a
    /// header line: it stays on a recycled handle of the same shape, and a
    /// default GET then has no custom header lines at all, so libcurl has no
    /// list to build, scan for each header it adds, and free per request.
    package let userAgent: String?
    package let authentication: Authentication?
    /// Host overrides, a Unix socket, the local side; nil (the common case):
    /// the URL's host, resolved and reached the usual way.
    package let route: ConnectRoute?

    package init(
        url: String,
        method: String,
        headers: [(name: String, value: String)],
        body: Body,
        idleTimeout: Double,
        resourceTimeout: Double,
        connectTimeout: Double? = nil,
        trustRootsPEM: Data?,
        tlsVersions: TLSVersionBounds = TLSVersionBounds(),
        pinnedPublicKey: String? = nil,
        clientCertificate: ClientCertificate? = nil,
        tlsChallenges: TLSChallengeCheck? = nil,
        proxy: ProxyRoute? = nil,
        connectOnly: Bool = false,
        decompressionLimit: DecompressionLimit? = nil,
        acceptEncoding: String?,
        userAgent: String? = nil,
        authentication: Authentication? = nil,
        route: ConnectRoute? = nil
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.idleTimeout = idleTimeout
        self.resourceTimeout = resourceTimeout
        self.connectTimeout = connectTimeout ?? idleTimeout
        self.trustRootsPEM = trustRootsPEM
        self.tlsVersions = tlsVersions
        self.pinnedPublicKey = pinnedPublicKey
        self.clientCertificate = clientCertificate
        self.tlsChallenges = tlsChallenges
        self.proxy = proxy
        self.connectOnly = connectOnly
        self.decompressionLimit = decompressionLimit
        self.acceptEncoding = acceptEncoding
        self.userAgent = userAgent
        self.authentication = authentication
        self.route = route
    }

    /// Bytes the body will send, or nil when unknown.
    package var bodyLength: Int64? {
        switch body {
        case .none: return 0
        case .data(let data): return Int64(data.count)
        case .file(let url):
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? NSNumber
            return size?.int64Value
        case .stream(_, let length): return length
        }
    }
}
