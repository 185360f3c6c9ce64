import NIOCore
import NIOHTTP1
import Synchronization

/// /cache, for response cache tests: a response whose caching fields the
/// query sets, and whose body names a new representation each time the
/// server makes one, so a test tells a cached answer from a fresh one.
enum CacheRoute {
    /// Process-wide: tests only compare numbers of one URL.
    private static let representations = Atomic<Int>(0)

    /// GET /cache?cc=V&etag=V&last-modified=V&expires=V&vary=V&age=V&status=N&size=S:
    /// - 200 (or `status`) with body "representation N", N new each time,
    ///   also in X-Representation, and the fields given (Cache-Control from
    ///   `cc`); with `size`, that text is followed by the pattern body up to
    ///   `size` bytes (a body that takes many reads);
    /// - 304 with the same fields (and a new X-Representation) when the
    ///   request's If-None-Match holds `etag`, or its If-Modified-Since is
    ///   `last-modified` exactly;
    /// - any other method: 200 "changed" without caching fields (for
    ///   invalidation by unsafe methods).
    static func respond(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        guard request.head.method == .GET || request.head.method == .HEAD else {
            return .text(.ok, "changed")
        }
        let query = request.target
        let number = representations.wrappingAdd(1, ordering: .relaxed).newValue
        var headers = HTTPHeaders()
        let given: [(String, String)] = [
            ("cc", "Cache-Control"), ("etag", "ETag"), ("last-modified", "Last-Modified"),
            ("expires", "Expires"), ("vary", "Vary"), ("age", "Age"), ("date", "Date"),
        ]
        for (parameter, field) in given {
            guard let value = query.value(parameter) else { continue }
            guard HTTPSyntax.isSendableHeaderValue(value) else {
                throw BadRequest(message: "header values must not contain CR, LF or NUL")
            }
            headers.add(name: field, value: value)
        }
        headers.add(name: "X-Representation", value: "\(number)")
        let requestHeaders = request.head.headers
        let etagMatches = query.value("etag").map { etag in
            requestHeaders["if-none-match"].contains { $0.contains(etag) }
        } ?? false
        let dateMatches = query.value("last-modified").map { requestHeaders["if-modified-since"].contains($0) } ?? false
        if etagMatches || dateMatches {
            return .fixed(HTTPResponseHead(version: .http1_1, status: .notModified, headers: headers), body: ByteBuffer())
        }
        let status = try query.integer("status", default: 200, in: 200...599)
        let size = try query.integer("size", default: 0, in: 0...(64 << 20))
        let text = "representation \(number)"
        guard size > text.utf8.count else {
            return .text(HTTPResponseStatus(statusCode: status), text, headers: headers)
        }
        var body = ByteBuffer(string: text)
        body.writeBytes(LoopbackServer.patternBody(count: size - text.utf8.count))
        return .fixed(HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers), body: body)
    }
}
