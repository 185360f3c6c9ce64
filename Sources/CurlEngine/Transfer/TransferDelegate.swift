import Foundation

/// What a transfer's body callback asks of the engine.
package enum BodyVerdict: Sendable {
    /// The bytes were taken.
    case accepted
    /// The bytes were NOT taken: pause receiving; libcurl hands the same bytes
    /// again after `CurlEngine.resumeReceiving`.
    case pause
    /// Stop the transfer with this error (e.g. an in-memory body cap).
    case abort(URLError)
}

/// The status line and header fields of a response: the final one, or an
/// informational (1xx) one before it.
package struct ResponseHead: Sendable {
    package var statusCode: Int
    /// "HTTP/1.1", "HTTP/2", ...
    package var httpVersion: String
    /// Kept as received bytes; Strings are made on demand.
    package var fields: ResponseHeaderFields
    /// Content-Length, when present and valid.
    package var contentLength: Int64?
    /// Whether a Content-Encoding changes the body's length on decoding.
    package var hasContentEncoding: Bool
    /// Whether the first Content-Type field starts with "multipart/" (ASCII
    /// case ignored). Found while parsing, so that telling the rare
    /// multipart/x-mixed-replace response apart makes no String for the others.
    package var contentTypeIsMultipart = false
    /// Whether any field is Set-Cookie (found while parsing, so a cookie jar
    /// looks at the fields only of responses that set cookies).
    package var hasSetCookie = false
    /// Whether any field is Strict-Transport-Security (found while parsing,
    /// so the HSTS store looks at the fields only of responses that set it).
    package var hasStrictTransportSecurity = false
    /// Content-Length values that disagree, or Content-Length beside
    /// Transfer-Encoding: the body's end cannot be known, and a response
    /// smuggled behind it could answer the next request (RFC 9112 §6.3).
    package var framingProblem: FramingProblem?

    /// A 1xx response (not 101): a final response follows it.
    package var isInformational: Bool { statusCode < 200 }

    init(
        statusCode: Int, httpVersion: String, fields: ResponseHeaderFields, contentLength: Int64?,
        hasContentEncoding: Bool, contentTypeIsMultipart: Bool, hasSetCookie: Bool = false,
        hasStrictTransportSecurity: Bool = false, framingProblem: FramingProblem? = nil
    ) {
        self.hasStrictTransportSecurity = hasStrictTransportSecurity
        self.framingProblem = framingProblem
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.fields = fields
        self.contentLength = contentLength
        self.hasContentEncoding = hasContentEncoding
        self.contentTypeIsMultipart = contentTypeIsMultipart
        self.hasSetCookie = hasSetCookie
    }

    /// A head made without the wire (a cached response, a stub): the
    /// summary flags are found from the fields here, as the parser does.
    package init(statusCode: Int, httpVersion: String, fields: ResponseHeaderFields) {
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.fields = fields
        contentLength = fields.count(named: "Content-Length") == 1
            ? fields.value(named: "Content-Length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 >= 0 ? $0 : nil }
            : nil
        hasContentEncoding = fields.value(named: "Content-Encoding").map { !$0.isEmpty && $0.lowercased() != "identity" } ?? false
        contentTypeIsMultipart = fields.value(named: "Content-Type")?.lowercased().hasPrefix("multipart/") ?? false
        hasSetCookie = fields.count(named: "Set-Cookie") > 0
        hasStrictTransportSecurity = fields.count(named: "Strict-Transport-Security") > 0
    }
}

/// How a transfer ended.
package struct TransferOutcome: Sendable {
    package var error: URLError?
    package var metrics: TransferMetrics
    /// The handshake stopped for the task's decision on a TLS challenge
    /// (`error` says so too); the task asks and starts the hop again.
    package var tlsChallenge: TLSChallengeReport?
    /// The proxy answered the CONNECT with 407, offering these methods
    /// (strongest first; empty when it named none libcurl speaks).
    package var proxyAuthenticationMethods: [TransferRequest.Authentication.Scheme]?
    /// The final response's trailer fields (after a chunked or HTTP/2
    /// body), when it sent any and the transfer succeeded.
    package var trailers: ResponseHeaderFields?

    package init(error: URLError?, metrics: TransferMetrics) {
        self.error = error
        self.metrics = metrics
    }
}

/// The core's side of a transfer. Every method is called on the engine thread
/// (or on a thread running an inline turn for it, see `InlineTurn`), must
/// return quickly, and must never call user code or block on a lock held
/// across an `await`.
///
/// Each call names its transfer, so one delegate can serve every transfer
/// of a task (one per redirect or authentication hop) and tell a late call
/// of a hop it has left from the current one, without an object per hop.
package protocol TransferDelegate: AnyObject, Sendable {
    func transferDidReceiveHead(_ head: consuming ResponseHead, of id: TransferID)
    func transferDidReceiveBody(_ bytes: UnsafeRawBufferPointer, of id: TransferID) -> BodyVerdict
    /// Upload progress: total body bytes handed to libcurl so far.
    func transferDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64, of id: TransferID)
    /// Called exactly once per started transfer, last.
    func transferDidComplete(_ outcome: TransferOutcome, of id: TransferID)
    /// An informational (1xx, not 101) response before the final one, such
    /// as 103 Early Hints.
    func transferDidReceiveInformationalHead(_ head: consuming ResponseHead, of id: TransferID)
}

extension TransferDelegate {
    package func transferDidReceiveInformationalHead(_ head: consuming ResponseHead, of id: TransferID) {}
}
