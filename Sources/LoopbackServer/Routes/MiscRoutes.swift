import NIOCore
import NIOHTTP1

/// /status, /delay, /close-idle, /response-headers and /headers/big.
enum MiscRoutes {
    /// ANY /status/CODE: that status with body "status CODE".
    ///
    /// 1xx codes cannot end an exchange: the 1xx is sent as an interim response (no body; a
    /// 103 with a Link header),
    /// followed by a final 200 with body "status CODE". 101 would switch protocols: over
    /// HTTP/1 only the 101 head is sent and the connection closed; over HTTP/2 (no 101 there)
    /// the stream is reset. 204 and 304 have no body.
    static func status(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let code = try request.target.integerSegment(1, named: "CODE", in: 100...599)
        let status = HTTPResponseStatus(statusCode: code)
        switch code {
        case 101:
            guard request.transport == .http1 else { return .reset }
            return .headThenClose(HTTPResponseHead(version: .http1_1, status: status))
        case 100..<200:
            // 103 Early Hints carries what it hints at, as a real server's does.
            let hints: HTTPHeaders = code == 103 ? ["Link": "</style.css>; rel=preload; as=style"] : [:]
            return .interim(
                HTTPResponseHead(version: .http1_1, status: status, headers: hints), then: .text(.ok, "status \(code)"))
        case 204, 304:
            return .fixed(HTTPResponseHead(version: .http1_1, status: status), body: ByteBuffer())
        default:
            return .text(status, "status \(code)")
        }
    }

    /// GET /delay/MS: 200 "ok" after MS milliseconds.
    static func delay(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let milliseconds = try request.target.integerSegment(1, named: "MS", in: 0...86_400_000)
        return .delayed(.milliseconds(Int64(milliseconds)), .text(.ok, "ok"))
    }

    /// GET /close-idle/MS: 200 "ok", then the server closes the connection if
    /// no request came on it within MS milliseconds (a keep-alive timeout).
    static func closeIdle(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let milliseconds = try request.target.integerSegment(1, named: "MS", in: 0...86_400_000)
        return .closeWhenIdle(after: .milliseconds(Int64(milliseconds)), .text(.ok, "ok"))
    }

    /// GET /response-headers?Name=Value&...: each query pair as a response header, in order.
    static func responseHeaders(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        .text(.ok, "ok", headers: try fields(fromQueryOf: request))
    }

    /// GET /trailers?name=value&...: 200 with the body "trailed body" (chunked over
    /// HTTP/1.1), then one trailer field per query pair, in order.
    static func trailers(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let head = HTTPResponseHead(
            version: .http1_1, status: .ok, headers: ["Content-Type": "text/plain; charset=utf-8"])
        return .trailed(head, body: ByteBuffer(string: "trailed body"), trailers: try fields(fromQueryOf: request))
    }

    /// Each query pair as a field, in order (checked: `RequestTarget.headerPairs`).
    private static func fields(fromQueryOf request: RequestInfo) throws(BadRequest) -> HTTPHeaders {
        var fields = HTTPHeaders()
        for (name, value) in try request.target.headerPairs(kind: "field") {
            fields.add(name: name, value: value)
        }
        return fields
    }

    /// Largest X-Big over HTTP/2. NIOHTTP2 cannot split a header block into CONTINUATION
    /// frames, so the HPACK-encoded headers must fit one frame (16 KiB unless the client allows
    /// more); 24 KiB of "a" encode to 15 KiB. A bigger request gets a 400 that says so instead
    /// of a connection error that would also kill the other streams.
    static let maximumBigHeaderOverHTTP2 = 24 * 1024

    /// GET /headers/big?size=N: one header X-Big of N bytes of "a" (default 1024, at most 16 MiB;
    /// over HTTP/2 at most `maximumBigHeaderOverHTTP2`).
    static func bigHeader(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let limit = request.transport == .http2 ? maximumBigHeaderOverHTTP2 : 16 * 1024 * 1024
        let size = try request.target.integer("size", default: 1024, in: 0...limit)
        var headers = HTTPHeaders()
        headers.add(name: "X-Big", value: String(repeating: "a", count: size))
        return .text(.ok, "ok", headers: headers)
    }
}
