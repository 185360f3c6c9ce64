import NIOCore
import NIOHTTP1

/// GET /redirect-raw?status=S&location=L: status S (default 302) with the Location value
/// written byte for byte as the percent-decoded L, unchecked: CR, LF, spaces, bytes that are
/// not UTF-8, any scheme, or nothing at all. It tests how a client copes with Location values
/// a real server might send.
///
/// NIO's encoder rightly refuses such values, so the whole response is written as raw bytes
/// below it (as /garbage does) and the connection is closed after it, since the HTTP/1 codec
/// never saw this response. HTTP/1.1 only: over HTTP/2 the answer is 400.
enum RawRedirectRoute {
    static func respond(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        guard request.transport == .http1 else {
            throw BadRequest(message: "/redirect-raw is HTTP/1.1 only")
        }
        let code = try request.target.integer("status", default: 302, in: 200...599)
        guard let location = request.target.byteValue("location") else {
            throw BadRequest(message: "location is required")
        }
        let status = HTTPResponseStatus(statusCode: code)
        var bytes = ByteBuffer(string: "HTTP/1.1 \(code) \(status.reasonPhrase)\r\nLocation: ")
        bytes.writeBytes(location)
        bytes.writeString("\r\nConnection: close\r\n")
        // 204 and 304 have no body; HEAD gets the head a GET would get.
        guard status.mayHaveResponseBody else {
            bytes.writeString("\r\n")
            return .raw(bytes)
        }
        let body = "redirecting"
        bytes.writeString("Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
        if request.head.method != .HEAD {
            bytes.writeString(body)
        }
        return .raw(bytes)
    }
}
