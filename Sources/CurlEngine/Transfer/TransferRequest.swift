import Foundation

/// Everything the engine needs to perform one HTTP exchange, already validated
/// by the core (scheme, header names and values, method token).
package struct TransferRequest: Sendable {
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
        package enum Scheme: Sendable {
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

    package var url: String
    package var method: String
    /// Header lines as they go on the wire, in order. An empty value is sent as
    /// an empty header (libcurl's "Name;" form).
    package var headers: [(name: String, value: String)]
    package var body: Body
    /// Seconds without any byte in either direction before the transfer fails
    /// with `.timedOut` (URLSession's `timeoutIntervalForRequest`).
    package var idleTimeout: Double
    /// Whole-transfer limit (URLSession's `timeoutIntervalForResource`).
    package var resourceTimeout: Double
    /// PEM certificates trusted instead of the system bundle, if set.
    package var trustRootsPEM: Data?
    /// The value for Accept-Encoding that libcurl both sends and decodes;
    /// "" means every encoding libcurl supports.
    package var acceptEncoding: String?
    /// Sent as User-Agent when `headers` has none. An option rather than a
    /// header line: it stays on a recycled handle of the same shape, and a
    /// default GET then has no custom header lines at all, so libcurl has no
    /// list to build, scan for each header it adds, and free per request.
    package var userAgent: String?
    package var authentication: Authentication?
    /// False when nobody can read this transfer's metrics: the engine then
    /// skips reading them from libcurl (a dozen getinfo calls) unless it fails.
    package var collectsMetrics = true

    package init(
        url: String,
        method: String,
        headers: [(name: String, value: String)],
        body: Body,
        idleTimeout: Double,
        resourceTimeout: Double,
        trustRootsPEM: Data?,
        acceptEncoding: String?,
        userAgent: String? = nil,
        authentication: Authentication? = nil
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.idleTimeout = idleTimeout
        self.resourceTimeout = resourceTimeout
        self.trustRootsPEM = trustRootsPEM
        self.acceptEncoding = acceptEncoding
        self.userAgent = userAgent
        self.authentication = authentication
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
