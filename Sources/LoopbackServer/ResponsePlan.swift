import NIOCore
import NIOHTTP1

/// Which protocol carries a request; a few routes answer differently over HTTP/2.
enum Transport: Sendable {
    case http1
    case http2
}

/// How the server answers one request. Routes produce it as plain data; RequestHandler is the
/// only code that writes, so backpressure, HEAD, keep-alive and disconnects live in one place.
indirect enum ResponsePlan {
    /// A complete response with a small in-memory body. Content-Length is set by the writer.
    case fixed(HTTPResponseHead, body: ByteBuffer)
    /// A response without Content-Length (chunked over HTTP/1.1), its body,
    /// then these trailer fields after the body.
    case trailed(HTTPResponseHead, body: ByteBuffer, trailers: HTTPHeaders)
    /// The head (framing headers included), then pattern bytes as the channel can take them.
    case pattern(HTTPResponseHead, PatternStream)
    /// The head (framing headers included), then each piece flushed on its own, `interval`
    /// apart (the first at once), then the end.
    case paced(HTTPResponseHead, pieces: [ByteBuffer], interval: TimeAmount)
    /// Wait, then answer with the next plan.
    case delayed(TimeAmount, ResponsePlan)
    /// Answer with the plan, then close the connection if it is still idle
    /// after the delay, as a server's keep-alive timeout does (HTTP/1).
    case closeWhenIdle(after: TimeAmount, ResponsePlan)
    /// A 1xx interim head, then the final answer.
    case interim(HTTPResponseHead, then: ResponsePlan)
    /// Only the head, then close the connection (HTTP/1) or reset the stream (HTTP/2).
    case headThenClose(HTTPResponseHead)
    /// Close the connection (HTTP/1) or reset the stream (HTTP/2) without answering.
    case reset
    /// Accept the request and never answer.
    case never
    /// Bytes written as they are below the HTTP/1 encoder (HTTP/1 only), then close: for
    /// responses NIO would refuse to encode, or that are not HTTP at all.
    case raw(ByteBuffer)

    /// /garbage: bytes that are not HTTP.
    static var garbage: ResponsePlan {
        .raw(ByteBuffer(string: "this is not http\r\n\r\n"))
    }

    /// A text response, e.g. `.text(.notFound, "not found")`.
    static func text(
        _ status: HTTPResponseStatus,
        _ text: String,
        headers: HTTPHeaders = [:]
    ) -> ResponsePlan {
        var headers = headers
        if !headers.contains(name: "content-type") {
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        }
        return .fixed(HTTPResponseHead(version: .http1_1, status: status, headers: headers), body: ByteBuffer(string: text))
    }
}

/// A run of pattern bytes and what happens once they are sent.
struct PatternStream {
    enum Ending {
        /// End the response normally.
        case end
        /// Send nothing more; keep the connection (or stream) open.
        case stall
        /// Close the connection (HTTP/1) or reset the stream (HTTP/2).
        case close
        /// Break the whole connection (over HTTP/2 too) under the TLS layer.
        case breakConnection(ConnectionFault)
    }

    /// Pattern offset of the first byte sent.
    var offset: Int
    /// Number of bytes to send.
    var count: Int
    /// Bytes per write; with chunked encoding each write is one chunk.
    var pieceSize: Int
    /// If set, one piece per interval (drip) instead of as fast as the client reads.
    var interval: TimeAmount?
    var ending: Ending

    init(offset: Int = 0, count: Int, pieceSize: Int = PatternStream.defaultPieceSize, interval: TimeAmount? = nil, ending: Ending = .end) {
        self.offset = offset
        self.count = count
        self.pieceSize = max(1, pieceSize)
        self.interval = interval
        self.ending = ending
    }

    /// 64 KiB: large enough for throughput, small enough that a slow reader costs little memory.
    static let defaultPieceSize = 64 * 1024
}
