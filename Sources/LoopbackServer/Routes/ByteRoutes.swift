import NIOCore
import NIOHTTP1

/// Routes that serve pattern bytes: /bytes, /chunked, /drip, /stall, /drop, /close-delimited, /gzip.
enum ByteRoutes {
    /// A client-chosen chunk size is one buffer in memory; this keeps a typo from costing GiBs.
    static let maximumPieceSize = 16 * 1024 * 1024

    /// GET /bytes/N: N bytes with Content-Length, streamed.
    static func bytes(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let count = try request.target.integerSegment(1, named: "N")
        return .pattern(head(contentLength: count), PatternStream(count: count))
    }

    /// GET /chunked/N?chunk=K: N bytes, Transfer-Encoding: chunked, one chunk per K bytes.
    static func chunked(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let count = try request.target.integerSegment(1, named: "N")
        let chunk = try request.target.integer("chunk", default: 4096, in: 1...maximumPieceSize)
        // No Content-Length: NIO's HTTP/1.1 encoder then frames the body as chunked, one chunk
        // per write. Over HTTP/2 there is no chunking; DATA frames carry the pieces.
        return .pattern(head(contentLength: nil), PatternStream(count: count, pieceSize: chunk))
    }

    /// GET /drip/N?chunk=K&interval=MS: Content-Length N, K bytes every MS milliseconds.
    static func drip(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let count = try request.target.integerSegment(1, named: "N")
        let chunk = try request.target.integer("chunk", default: 1, in: 1...maximumPieceSize)
        let interval = try request.target.integer("interval", default: 100, in: 0...86_400_000)
        return .pattern(
            head(contentLength: count),
            PatternStream(count: count, pieceSize: chunk, interval: .milliseconds(Int64(interval)))
        )
    }

    /// GET /stall/N?after=K: Content-Length N, K bytes, then silence with the connection open.
    static func stall(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let count = try request.target.integerSegment(1, named: "N")
        let after = try request.target.integer("after", default: 0, in: 0...count)
        return .pattern(head(contentLength: count), PatternStream(count: after, ending: .stall))
    }

    /// GET /drop/N?after=K&how=close|reset|garbage: Content-Length N, K bytes (default N/2),
    /// then the connection ends: `close` (default) closes it (with TLS: after a close_notify;
    /// HTTP/2: resets the stream); `reset` sends a TCP reset under TLS, no close_notify;
    /// `garbage` writes bytes that are not a TLS record of the session, then closes.
    static func drop(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let count = try request.target.integerSegment(1, named: "N")
        let after = try request.target.integer("after", default: count / 2, in: 0...count)
        let ending: PatternStream.Ending
        switch request.target.value("how") ?? "close" {
        case "close": ending = .close
        case "reset": ending = .breakConnection(.reset)
        case "garbage": ending = .breakConnection(.garbage)
        default: throw BadRequest(message: "how must be close, reset or garbage")
        }
        return .pattern(head(contentLength: count), PatternStream(count: after, ending: ending))
    }

    /// GET /close-delimited/N: N bytes whose end is the end of the connection.
    static func closeDelimited(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let count = try request.target.integerSegment(1, named: "N")
        switch request.transport {
        case .http1:
            // An HTTP/1.0 status line is what makes NIO's encoder send the body as is (no
            // Content-Length, no chunking); the client then reads until the connection closes.
            var head = head(contentLength: nil)
            head.version = .http1_0
            head.headers.add(name: "Connection", value: "close")
            return .pattern(head, PatternStream(count: count, ending: .close))
        case .http2:
            // HTTP/2 has no close-delimited bodies: END_STREAM marks the end instead.
            return .pattern(head(contentLength: nil), PatternStream(count: count))
        }
    }

    /// GET /gzip/N: N pattern bytes sent gzip-encoded (Content-Encoding: gzip;
    /// Content-Length is the encoded length, a little more than N).
    static func gzip(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let count = try request.target.integerSegment(1, named: "N", in: 0...maximumPieceSize)
        var head = head(contentLength: nil)
        head.headers.add(name: "Content-Encoding", value: "gzip")
        return .fixed(head, body: GzipStoredEncoding.encode(Array(LoopbackServer.patternBody(count: count))))
    }

    /// GET /gzip-bomb/N: N zero bytes gzip-encoded at about 159:1 (a
    /// decompression bomb; see GzipZerosBomb), with Content-Length.
    static func gzipBomb(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let count = try request.target.integerSegment(1, named: "N", in: 0...(4 << 30))
        let body = GzipZerosBomb.encode(zeros: count)
        var head = head(contentLength: body.readableBytes)
        head.headers.add(name: "Content-Encoding", value: "gzip")
        return .fixed(head, body: body)
    }

    static func head(status: HTTPResponseStatus = .ok, contentLength: Int?) -> HTTPResponseHead {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/octet-stream")
        if let contentLength {
            headers.add(name: "Content-Length", value: String(contentLength))
        }
        return HTTPResponseHead(version: .http1_1, status: status, headers: headers)
    }
}
