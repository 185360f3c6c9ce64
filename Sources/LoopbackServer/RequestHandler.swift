import NIOCore
import NIOHTTP1

/// Serves requests on one HTTP/1.1 connection or one HTTP/2 stream (behind
/// HTTP2FramePayloadToHTTP1ServerCodec): asks the Router what to do, feeds the request body to
/// the route, then carries out the ResponsePlan. It is the only code that writes responses.
///
/// Over HTTP/1.1, NIO's HTTPServerPipelineHandler (in front of this handler) delivers one
/// request at a time and holds pipelined ones until this one's response has ended.
final class RequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        /// Waiting for a request head.
        case idle
        /// Head seen; the body goes to the route until the request ends.
        case receiving(HTTPRequestHead, Route)
        /// Answering (streaming, waiting on a timer, stalled, or never answering).
        case answering(HTTPRequestHead)
        /// The connection or stream is closing or gone: nothing more is read or written.
        case closed
    }

    /// A pattern body being sent.
    private struct Progress {
        var nextOffset: Int
        var remaining: Int
        let stream: PatternStream
    }

    /// At most this much is written per event loop turn, so one fast client cannot starve the
    /// other connections that share the server's single thread.
    private static let bytesPerTurn = 1024 * 1024
    /// Written but unflushed bytes are flushed at this size: TLS only encrypts (and the socket
    /// only reports unwritable) once flushed.
    private static let flushThreshold = 64 * 1024

    private let connectionID: Int
    private let transport: Transport
    private let auth: AuthState
    private let flaky: FlakyCounters
    private var state: State = .idle
    private var progress: Progress?
    private var timer: Scheduled<Void>?
    /// Guards pump() against re-entry from events fired while it flushes.
    private var pumping = false

    init(connectionID: Int, transport: Transport, auth: AuthState, flaky: FlakyCounters) {
        self.connectionID = connectionID
        self.transport = transport
        self.auth = auth
        self.flaky = flaky
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch Self.unwrapInboundIn(data) {
        case .head(let head):
            guard case .idle = state else { return }
            if expectsContinue(head) {
                let interim = HTTPResponseHead(version: .http1_1, status: .continue)
                context.writeAndFlush(Self.wrapOutboundOut(.head(interim)), promise: nil)
            }
            let info = RequestInfo(
                head: head,
                target: RequestTarget(uri: head.uri),
                connectionID: connectionID,
                transport: transport,
                auth: auth,
                flaky: flaky
            )
            let route = Router.route(info)
            state = .receiving(head, route)
            if case .duplexEcho(let echo) = route {
                context.writeAndFlush(Self.wrapOutboundOut(.head(echo.head)), promise: nil)
            }
        case .body(let buffer):
            guard case .receiving(_, let route) = state else { return }
            switch route {
            case .respond:
                break  // bodies of other routes are read and dropped
            case .echo(let digest):
                digest.consume(buffer)
            case .echoBody(let collector):
                collector.consume(buffer)
            case .duplexEcho(let echo):
                if let piece = echo.echo(buffer) {
                    context.writeAndFlush(Self.wrapOutboundOut(.body(.byteBuffer(piece))), promise: nil)
                }
                if echo.remaining == 0, !echo.responseEnded {
                    // The response ends before the request does.
                    echo.responseEnded = true
                    context.writeAndFlush(Self.wrapOutboundOut(.end(nil)), promise: nil)
                }
            }
        case .end(let trailers):
            guard case .receiving(let head, let route) = state else { return }
            if case .duplexEcho(let echo) = route {
                // The response went out as the body came; end it if the body ended first.
                if echo.responseEnded {
                    state = .idle
                } else {
                    echo.responseEnded = true
                    state = .answering(head)
                    endResponse(for: head, context: context)
                }
                return
            }
            state = .answering(head)
            let plan: ResponsePlan
            switch route {
            case .respond(let fixedPlan):
                plan = fixedPlan
            case .echo(let digest):
                plan = digest.response(for: head, trailers: trailers)
            case .echoBody(let collector):
                plan = collector.response(for: head)
            case .duplexEcho:
                return  // answered above
            }
            execute(plan, for: head, context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            pump(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A client that vanishes mid-response shows up here (broken pipe, reset, TLS errors).
        // It is expected in tests, so it is not logged; the connection or stream just closes.
        stop()
        context.close(promise: nil)
    }

    // MARK: Answering

    private func execute(_ plan: ResponsePlan, for request: HTTPRequestHead, context: ChannelHandlerContext) {
        switch plan {
        case .fixed(var head, let body):
            if head.status.mayHaveResponseBody {
                head.headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
            }
            write(head: head, for: request, context: context)
            if body.readableBytes > 0, request.method != .HEAD {
                context.write(Self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            }
            endResponse(for: request, context: context)

        case .trailed(let head, let body, let trailers):
            write(head: head, for: request, context: context)
            if body.readableBytes > 0, request.method != .HEAD {
                context.write(Self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            }
            endResponse(for: request, trailers: trailers, context: context)

        case .pattern(let head, let stream):
            let headWritten = write(head: head, for: request, context: context)
            if stream.count == 0 || request.method == .HEAD {
                context.flush()
                finish(stream.ending, for: request, lastWrite: headWritten, context: context)
                return
            }
            progress = Progress(nextOffset: stream.offset, remaining: stream.count, stream: stream)
            if stream.interval != nil {
                context.flush()
                scheduleDrip(for: request, context: context)
            } else {
                pump(context: context)
            }

        case .paced(let head, let pieces, let interval):
            write(head: head, for: request, context: context)
            sendPaced(request.method == .HEAD ? [] : pieces[...], interval: interval, for: request, context: context)

        case .delayed(let delay, let next):
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
                timer = nil
                guard case .answering = state else { return }
                execute(next, for: request, context: context)
            }

        case .closeWhenIdle(let delay, let next):
            execute(next, for: request, context: context)
            if transport == .http1 {
                context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
                    guard case .idle = state else { return }
                    state = .closed
                    context.close(promise: nil)
                }
            }

        case .interim(let head, let next):
            context.writeAndFlush(Self.wrapOutboundOut(.head(head)), promise: nil)
            execute(next, for: request, context: context)

        case .headThenClose(let head):
            state = .closed
            context.write(Self.wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(Self.wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }

        case .reset:
            // Closing an HTTP/2 stream channel before its end sends RST_STREAM.
            state = .closed
            context.close(promise: nil)

        case .never:
            break

        case .raw(let bytes):
            state = .closed
            writeRawAndClose(bytes, context: context)
        }
    }

    /// Writes the response head, with the connection headers HTTP/1.1 keep-alive needs.
    @discardableResult
    private func write(head: HTTPResponseHead, for request: HTTPRequestHead, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        var head = head
        if transport == .http1 {
            if !request.isKeepAlive {
                head.headers.replaceOrAdd(name: "Connection", value: "close")
            } else if request.version == .http1_0 {
                // An HTTP/1.0 client keeps the connection only if told so.
                head.headers.replaceOrAdd(name: "Connection", value: "keep-alive")
            }
        }
        return context.write(Self.wrapOutboundOut(.head(head)))
    }

    /// Ends the response; over HTTP/1.1 the connection then serves the next request, or closes
    /// if the client asked for that.
    private func endResponse(for request: HTTPRequestHead, trailers: HTTPHeaders? = nil, context: ChannelHandlerContext) {
        progress = nil
        guard transport == .http1, !request.isKeepAlive else {
            // Set before writing: the pipelining handler may hand over the next request from
            // inside this write.
            state = .idle
            context.writeAndFlush(Self.wrapOutboundOut(.end(trailers)), promise: nil)
            return
        }
        state = .closed
        context.writeAndFlush(Self.wrapOutboundOut(.end(trailers))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    private func finish(
        _ ending: PatternStream.Ending,
        for request: HTTPRequestHead,
        lastWrite: EventLoopFuture<Void>,
        context: ChannelHandlerContext
    ) {
        progress = nil
        switch ending {
        case .end:
            endResponse(for: request, context: context)
        case .stall:
            break  // stays .answering: no more bytes, no end, connection kept open
        case .close:
            // After the last byte left: closing earlier would drop queued writes.
            state = .closed
            lastWrite.assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        case .breakConnection(let fault):
            state = .closed
            // An HTTP/2 stream's connection is its parent channel, on the same event loop
            // (an HTTP/1 connection's parent is the listening socket).
            let connection = transport == .http2 ? context.channel.parent ?? context.channel : context.channel
            lastWrite.assumeIsolated().whenComplete { _ in
                SocketEdgeHandler.breakConnection(connection, fault)
            }
        }
    }

    /// Sends pattern pieces while the channel is writable. When it is not, the next call comes
    /// from channelWritabilityChanged, so a slow client makes the server wait, not buffer.
    private func pump(context: ChannelHandlerContext) {
        guard !pumping, let current = progress, current.stream.interval == nil,
            case .answering(let request) = state
        else { return }
        pumping = true
        defer { pumping = false }

        var budget = Self.bytesPerTurn
        var unflushed = 0
        while budget > 0, context.channel.isWritable, var current = progress {
            let count = min(current.stream.pieceSize, current.remaining)
            let piece = PatternBody.buffer(offset: current.nextOffset, count: count, allocator: context.channel.allocator)
            current.nextOffset += count
            current.remaining -= count
            progress = current
            budget -= count
            if current.remaining == 0 {
                let lastWrite = context.writeAndFlush(Self.wrapOutboundOut(.body(.byteBuffer(piece))))
                // Ending the response can hand over the next pipelined request right away, and
                // its body must be able to pump: this call is done with the channel.
                pumping = false
                finish(current.stream.ending, for: request, lastWrite: lastWrite, context: context)
                return
            }
            context.write(Self.wrapOutboundOut(.body(.byteBuffer(piece))), promise: nil)
            unflushed += count
            if unflushed >= Self.flushThreshold {
                unflushed = 0
                // May fire channelInactive (progress becomes nil) or writability changes.
                context.flush()
            }
        }
        if unflushed > 0 {
            context.flush()
        }
        // Out of budget while still writable: continue on a later turn of the event loop. (A
        // writability change that arrived during a flush above was ignored by the guard, so
        // this also covers it.)
        if progress != nil, context.channel.isWritable {
            context.eventLoop.assumeIsolated().execute { [self] in
                pump(context: context)
            }
        }
    }

    /// /drip: one piece per interval.
    private func scheduleDrip(for request: HTTPRequestHead, context: ChannelHandlerContext) {
        guard let current = progress, let interval = current.stream.interval else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: interval) { [self] in
            timer = nil
            guard var current = progress, case .answering = state else { return }
            let count = min(current.stream.pieceSize, current.remaining)
            let piece = PatternBody.buffer(offset: current.nextOffset, count: count, allocator: context.channel.allocator)
            current.nextOffset += count
            current.remaining -= count
            progress = current
            let written = context.writeAndFlush(Self.wrapOutboundOut(.body(.byteBuffer(piece))))
            if current.remaining == 0 {
                finish(current.stream.ending, for: request, lastWrite: written, context: context)
            } else {
                scheduleDrip(for: request, context: context)
            }
        }
    }

    /// `.paced`: writes the first piece, and the others `interval` apart; then ends.
    private func sendPaced(
        _ pieces: ArraySlice<ByteBuffer>,
        interval: TimeAmount,
        for request: HTTPRequestHead,
        context: ChannelHandlerContext
    ) {
        var pieces = pieces
        // Without an interval all pieces go out in this turn (they are in memory already).
        while let piece = pieces.popFirst() {
            guard case .answering = state else { return }
            context.writeAndFlush(Self.wrapOutboundOut(.body(.byteBuffer(piece))), promise: nil)
            if interval > .zero, !pieces.isEmpty {
                timer = context.eventLoop.assumeIsolated().scheduleTask(in: interval) { [self, rest = pieces] in
                    timer = nil
                    sendPaced(rest, interval: interval, for: request, context: context)
                }
                return
            }
        }
        guard case .answering = state else { return }
        endResponse(for: request, context: context)
    }

    /// `.raw`: bytes written below the HTTP/1 encoder, then close.
    private func writeRawAndClose(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        // Writing through the encoder's own context hands the bytes to the handler after it
        // (TLS or the socket), so they skip HTTP encoding. Without an encoder (not HTTP/1)
        // there is nothing raw to write: just close.
        guard let encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) else {
            context.close(promise: nil)
            return
        }
        encoder.writeAndFlush(NIOAny(IOData.byteBuffer(bytes))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// Forgets the current response: cancels timers and stops streaming.
    private func stop() {
        state = .closed
        progress = nil
        timer?.cancel()
        timer = nil
    }

    private func expectsContinue(_ head: HTTPRequestHead) -> Bool {
        head.headers["expect"].contains { $0.lowercased() == "100-continue" }
    }
}
