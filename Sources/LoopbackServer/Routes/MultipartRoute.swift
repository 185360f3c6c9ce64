import NIOCore
import NIOHTTP1

/// GET /multipart-replace?parts=N&size=K&interval=MS: a multipart/x-mixed-replace body (the
/// "server push" of webcams and old status pages) of N parts (default 3), each K pattern
/// bytes (default 16, pattern offset 0 in every part), MS milliseconds apart (default 0).
///
/// Each part is one piece of a `.paced` plan: without Content-Length the HTTP/1.1 encoder
/// sends it chunked (one chunk per part), over HTTP/2 in DATA frames. The closing delimiter
/// follows the last part at once.
enum MultipartRoute {
    static let boundary = "loopbackboundary"
    /// Parts are held in memory until sent; this keeps a typo from costing GiBs.
    static let maximumTotalSize = 64 * 1024 * 1024

    static func respond(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let parts = try request.target.integer("parts", default: 3, in: 0...10_000)
        let size = try request.target.integer("size", default: 16, in: 0...maximumTotalSize)
        let interval = try request.target.integer("interval", default: 0, in: 0...86_400_000)
        guard parts * size <= maximumTotalSize else {
            throw BadRequest(message: "parts * size must be at most \(maximumTotalSize)")
        }

        var pieces: [ByteBuffer] = []
        for _ in 0..<parts {
            var piece = ByteBuffer(
                string: "--\(boundary)\r\nContent-Type: text/plain\r\nContent-Length: \(size)\r\n\r\n"
            )
            piece.writeBytes(LoopbackServer.patternBody(count: size))
            piece.writeString("\r\n")
            pieces.append(piece)
        }
        let closing = "--\(boundary)--\r\n"
        if pieces.isEmpty {
            pieces.append(ByteBuffer(string: closing))
        } else {
            pieces[pieces.count - 1].writeString(closing)
        }

        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "multipart/x-mixed-replace; boundary=\(boundary)")
        return .paced(
            HTTPResponseHead(version: .http1_1, status: .ok, headers: headers),
            pieces: pieces,
            interval: .milliseconds(Int64(interval))
        )
    }
}
