import Foundation
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// WebSocket routes (HTTP/1.1 Upgrade, RFC 6455), for clients' WebSocket tests:
/// - /ws/echo: every text or binary message back as it came; with
///   `?fragment=N`, sent back in frames of N bytes. Pings get pongs; a close
///   gets its close echoed.
/// - /ws/send/N: one binary message of N pattern bytes right after opening.
/// - /ws/close/CODE: closes at once with CODE and the reason "bye".
/// - /ws/bad-frame: sends a frame with a reserved bit set.
/// - /ws/unmasked-check: answers each message with "masked" or "unmasked",
///   as the frames arrived (NIO unmasks them; the server sees the bit).
/// - /ws/drop: drops the TCP connection right after opening.
/// The subprotocol is the first offered of "chat" and "superchat".
enum WebSocketRoutes {
    static func upgrader() -> NIOWebSocketServerUpgrader {
        NIOWebSocketServerUpgrader(
            maxFrameSize: 1 << 24, automaticErrorHandling: true,
            shouldUpgrade: { channel, head in
                guard head.uri.hasPrefix("/ws/") else { return channel.eventLoop.makeSucceededFuture(nil) }
                var headers = HTTPHeaders()
                let offered = head.headers["Sec-WebSocket-Protocol"].flatMap { $0.split(separator: ",") }
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                if let chosen = offered.first(where: { $0 == "chat" || $0 == "superchat" }) {
                    headers.add(name: "Sec-WebSocket-Protocol", value: chosen)
                }
                return channel.eventLoop.makeSucceededFuture(headers)
            },
            upgradePipelineHandler: { channel, head in
                channel.pipeline.addHandler(WebSocketRouteHandler(uri: head.uri))
            })
    }
}

final class WebSocketRouteHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: NIO calls a handler on its channel's event loop only.
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let path: String
    private let query: [String: String]
    private var partial: ByteBuffer?
    private var partialOpcode: WebSocketOpcode = .binary
    private var closeSent = false

    init(uri: String) {
        let parts = uri.split(separator: "?", maxSplits: 1)
        path = String(parts[0])
        var query: [String: String] = [:]
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                if kv.count == 2 { query[String(kv[0])] = String(kv[1]) }
            }
        }
        self.query = query
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let segments = path.split(separator: "/").map(String.init)  // ["ws", route, arg?]
        guard segments.count >= 2 else { return }
        switch segments[1] {
        case "send":
            let count = segments.count > 2 ? Int(segments[2]) ?? 0 : 0
            var buffer = context.channel.allocator.buffer(capacity: count)
            buffer.writeBytes((0..<count).map { UInt8(truncatingIfNeeded: $0) })
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .binary, data: buffer)), promise: nil)
        case "close":
            let code = segments.count > 2 ? UInt16(segments[2]) ?? 1000 : 1000
            sendClose(context: context, code: code, reason: "bye")
        case "bad-frame":
            let frame = WebSocketFrame(
                fin: true, rsv1: true, opcode: .text, data: context.channel.allocator.buffer(string: "x"))
            context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
        case "drop":
            context.close(promise: nil)
        default:
            break
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping:
            var payload = frame.unmaskedData
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: payload.readSlice(length: payload.readableBytes)!)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            var payload = frame.unmaskedData
            let code = payload.readInteger(as: UInt16.self) ?? 1000
            if !closeSent { sendClose(context: context, code: code, reason: "") }
            context.close(promise: nil)
        case .text, .binary, .continuation:
            if path.hasPrefix("/ws/unmasked-check") {
                let answer = frame.maskKey == nil ? "unmasked" : "masked"
                let reply = WebSocketFrame(fin: true, opcode: .text, data: context.channel.allocator.buffer(string: answer))
                context.writeAndFlush(wrapOutboundOut(reply), promise: nil)
                return
            }
            var data = frame.unmaskedData
            if frame.opcode != .continuation {
                partialOpcode = frame.opcode
                partial = context.channel.allocator.buffer(capacity: data.readableBytes)
            }
            partial?.writeBuffer(&data)
            guard frame.fin, let whole = partial else { return }
            partial = nil
            echo(context: context, opcode: partialOpcode, whole)
        default:
            break
        }
    }

    private func echo(context: ChannelHandlerContext, opcode: WebSocketOpcode, _ message: ByteBuffer) {
        let size = query["fragment"].flatMap(Int.init) ?? 0
        guard size > 0, message.readableBytes > size else {
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: opcode, data: message)), promise: nil)
            return
        }
        var rest = message
        var first = true
        while rest.readableBytes > 0 {
            let piece = rest.readSlice(length: min(size, rest.readableBytes))!
            let frame = WebSocketFrame(fin: rest.readableBytes == 0, opcode: first ? opcode : .continuation, data: piece)
            context.write(wrapOutboundOut(frame), promise: nil)
            first = false
        }
        context.flush()
    }

    private func sendClose(context: ChannelHandlerContext, code: UInt16, reason: String) {
        closeSent = true
        var payload = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        payload.writeInteger(code)
        payload.writeString(reason)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: payload)), promise: nil)
    }
}
