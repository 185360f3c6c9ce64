import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one hop does with the session's response cache: the state of its
/// `CacheStage` (none when the session has no cache or the hop does not
/// touch it, so such hops pay nothing), with explicit transitions for the
/// head, the body and the end.
struct HopCache {
    enum Mode {
        /// A GET sent to the network: its response may be stored.
        case load
        /// A GET sent with conditions for `stored`: a 304 answers with it.
        case revalidate(CachedResponse)
        /// An unsafe method (POST, PUT, DELETE, ...): a success removes
        /// the URL's stored response (RFC 9111 §4.4).
        case invalidate
    }

    let cache: ResponseCache
    /// The hop's request, and the session's additional headers it did not
    /// override: merged only when a response is stored (see `request`).
    private let hopRequest: URLRequest
    private let additionalHeaders: [String: String]
    let requestDate: Date
    private(set) var mode: Mode
    private(set) var capture: Capture?
    /// Set by a 304 to a revalidation: the stored response, brought up to
    /// date, answers the hop instead of the 304.
    private(set) var notModified: CachedResponse?

    /// The body of a storable response, collected as it is delivered.
    struct Capture {
        var statusCode: Int
        var httpVersion: String
        var fields: CachedHeaderFields
        var body = Data()
        let limit: Int
        let responseDate: Date
    }

    init(
        cache: ResponseCache, request: URLRequest, additionalHeaders: [String: String] = [:], mode: Mode,
        now: Date = Date()
    ) {
        self.cache = cache
        hopRequest = request
        self.additionalHeaders = additionalHeaders
        self.mode = mode
        requestDate = now
    }

    /// The request as the server saw it: with the session's additional
    /// headers it did not set itself (what Vary is matched against).
    var request: URLRequest {
        CacheRules.requestAsSent(hopRequest, additionalHeaders: additionalHeaders)
    }

    /// What the hop does with a final response head.
    /// - Parameter fields: nil when the head has nothing that could make it
    ///   storable (see `CacheHeadInputs`).
    enum HeadVerdict {
        /// Deliver it as usual.
        case deliver
        /// A 304 that revalidated the stored response: swallow it (and its
        /// empty body); the stored response answers once the hop ends.
        case swallowNotModified
        /// A success to an unsafe method: remove the URL's stored response.
        case invalidate(URL)
    }

    mutating func receivedHead(
        statusCode: Int, httpVersion: String, fields: CachedHeaderFields?,
        contentLength: Int64?, url: URL, authenticated: Bool, mayBeHeld: Bool, now: Date = Date()
    ) -> HeadVerdict {
        switch mode {
        case .invalidate:
            return (200..<400).contains(statusCode) ? .invalidate(url) : .deliver
        case .revalidate(let stored) where statusCode == 304:
            notModified = stored.updated(
                byNotModified: fields ?? CachedHeaderFields(), requestDate: requestDate, responseDate: now)
            return .swallowNotModified
        case .revalidate, .load:
            // nil fields: nothing in the head could make it storable. The
            // cache's size limit (read under its lock) only after that.
            guard !mayBeHeld, let fields, CacheRules.mayStore(statusCode: statusCode, fields: fields, request: request, authenticated: authenticated),
                CacheRules.isReusable(fields: fields, statusCode: statusCode)
            else {
                return .deliver
            }
            let limit = cache.maximumEntrySize
            guard contentLength.map({ $0 <= limit }) ?? true else { return .deliver }
            capture = Capture(statusCode: statusCode, httpVersion: httpVersion, fields: fields, limit: limit, responseDate: now)
            return .deliver
        }
    }

    /// Body bytes of the delivered response.
    mutating func receivedBody(_ bytes: UnsafeRawBufferPointer) {
        guard capture != nil else { return }
        if capture!.body.count + bytes.count > capture!.limit {
            capture = nil  // too large to keep: delivered, not stored
            return
        }
        capture!.body.append(contentsOf: bytes)
    }

    /// The response to offer for storing once the hop ended well: its body
    /// is the decoded one, so the fields describing the encoded body are
    /// replaced by its real length.
    mutating func takeCaptured(url: URL) -> CachedResponse? {
        guard let capture else { return nil }
        self.capture = nil
        var fields = capture.fields
        let encodingFields: Set<String> = ["content-encoding", "content-length", "transfer-encoding"]
        fields.removeAll { encodingFields.contains($0.lowercased()) }
        fields.append(name: "Content-Length", value: String(capture.body.count))
        return CachedResponse(
            url: url, statusCode: capture.statusCode, httpVersion: capture.httpVersion, fields: fields,
            data: capture.body, requestDate: requestDate, responseDate: capture.responseDate)
    }

    /// Whether the hop's end has anything for the cache to do: a 304's
    /// stored response to answer with, or a captured response to offer for
    /// storing. Most hops (a `no-store` response, nothing stored) have not.
    var hasWorkAtEnd: Bool { notModified != nil || capture != nil }

    mutating func takeNotModified() -> CachedResponse? {
        defer { notModified = nil }
        return notModified
    }
}
