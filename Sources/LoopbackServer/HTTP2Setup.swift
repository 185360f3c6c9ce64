import NIOCore
import NIOHTTP1
import NIOHTTP2

/// The HTTP/2 side of an ALPN "h2" connection: NIOHTTP2's handler and stream multiplexer, and
/// for every stream the HTTP/2 <-> HTTP/1 part codec in front of the same RequestHandler that
/// serves HTTP/1.1, so each route exists once.
///
/// Routes that only make sense on a raw HTTP/1 connection behave like this over HTTP/2:
/// - /garbage: the stream is reset (RST_STREAM), nothing is written.
/// - /drop: the first K bytes are sent, then the stream is reset.
/// - /close-delimited: the body is sent without Content-Length and ends with END_STREAM.
/// - /status/101: the stream is reset (101 does not exist in HTTP/2).
/// - /redirect-raw: 400 (its raw bytes would need an HTTP/1 connection to write them on).
/// - /auth/basic-then-close: with Authorization the stream is reset, not the connection.
/// - /headers/big: at most 24 KiB, else 400 (NIOHTTP2 sends no CONTINUATION frames, so the
///   encoded header block must fit one frame).
enum HTTP2Setup {
    static func configure(_ channel: any Channel, connectionID: Int, auth: AuthState, flaky: FlakyCounters) throws {
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            // Tests open many parallel streams on one connection.
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000),
            // Large request headers (tests of big headers) must not be refused by the server.
            HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 20),
            // Bigger windows than the 64 KiB default keep large uploads (/echo) fast.
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        ]
        var stream = NIOHTTP2Handler.StreamConfiguration()
        stream.targetWindowSize = 1 << 20

        _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
            mode: .server,
            connectionConfiguration: connection,
            streamConfiguration: stream,
            inboundStreamInitializer: { streamChannel in
                streamChannel.eventLoop.makeCompletedFuture {
                    let sync = streamChannel.pipeline.syncOperations
                    try sync.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                    try sync.addHandler(RequestHandler(connectionID: connectionID, transport: .http2, auth: auth, flaky: flaky))
                }
            }
        )
    }
}
