import Foundation
import NIOCore
import NIOPosix

/// The client side of one proxy connection: reads the first request (an
/// HTTP head, or a SOCKS5 greeting), connects to the target, then relays.
final class ProxyFrontHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: NIO calls a handler on its channel's event loop only, and
    // every mutable field is touched from those calls.
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Stage {
        case head(ByteBuffer)
        case socksRequest(ByteBuffer)
        case connecting(pending: ByteBuffer)
        case relaying(any Channel)
        case closed
    }

    private let state: ProxyState
    private var stage: Stage = .head(ByteBuffer())

    init(state: ProxyState) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        switch stage {
        case .head(var buffer):
            buffer.writeBuffer(&bytes)
            if buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) == 5 {
                socksGreeting(context: context, buffer: buffer)
            } else {
                httpHead(context: context, buffer: buffer)
            }
        case .socksRequest(var buffer):
            buffer.writeBuffer(&bytes)
            socksRequest(context: context, buffer: buffer)
        case .connecting(var pending):
            pending.writeBuffer(&bytes)
            stage = .connecting(pending: pending)
        case .relaying(let peer):
            peer.writeAndFlush(bytes, promise: nil)
        case .closed:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .relaying(let peer) = stage { peer.close(promise: nil) }
        stage = .closed
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    // MARK: - HTTP (forward and CONNECT)

    private func httpHead(context: ChannelHandlerContext, buffer: ByteBuffer) {
        let view = buffer.readableBytesView
        guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else {
            stage = .head(buffer)
            if buffer.readableBytes > 64 * 1024 { context.close(promise: nil) }
            return
        }
        let headText = String(decoding: view[view.startIndex..<end.lowerBound], as: UTF8.self)
        var rest = buffer
        rest.moveReaderIndex(to: end.upperBound)
        var lines = headText.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", maxSplits: 2).map(String.init)
        guard requestLine.count == 3 else { return context.close(promise: nil) }
        let (method, target) = (requestLine[0], requestLine[1])
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let authorization = headers.first { $0.name.lowercased() == "proxy-authorization" }?.value
        let authorized = state.expectedAuthorization == nil || authorization == state.expectedAuthorization
        state.record(LoopbackProxy.Record(method: method, target: target, headers: headers, authorized: authorized))
        guard authorized else {
            respond(context: context, status: "407 Proxy Authentication Required", extra: [
                "Proxy-Authenticate: Basic realm=\"loopback-proxy\"",
            ])
            return
        }
        if method == "CONNECT" {
            guard let (host, port) = Self.hostAndPort(target) else {
                return respond(context: context, status: "400 Bad Request", extra: [])
            }
            connect(context: context, host: host, port: port, pending: rest) { client in
                var established = client.allocator.buffer(capacity: 64)
                established.writeString("HTTP/1.1 200 Connection established\r\n\r\n")
                client.writeAndFlush(established, promise: nil)
            }
            return
        }
        guard let url = URL(string: target), let host = url.host, url.scheme == "http" else {
            return respond(context: context, status: "400 Bad Request", extra: [])
        }
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        let dropped: Set<String> = ["proxy-authorization", "proxy-connection", "connection"]
        var forwarded = "\(method) \(path) \(requestLine[2])\r\n"
        for (name, value) in headers where !dropped.contains(name.lowercased()) {
            forwarded += "\(name): \(value)\r\n"
        }
        forwarded += "Connection: close\r\n\r\n"
        var pending = context.channel.allocator.buffer(capacity: forwarded.utf8.count + rest.readableBytes)
        pending.writeString(forwarded)
        pending.writeBuffer(&rest)
        connect(context: context, host: host, port: url.port ?? 80, pending: pending) { _ in }
    }

    private func respond(context: ChannelHandlerContext, status: String, extra: [String]) {
        respond(client: context.channel, status: status, extra: extra)
    }

    private func respond(client: any Channel, status: String, extra: [String]) {
        var response = client.allocator.buffer(capacity: 256)
        response.writeString("HTTP/1.1 \(status)\r\n")
        for line in extra { response.writeString(line + "\r\n") }
        response.writeString("Content-Length: 0\r\nConnection: close\r\n\r\n")
        stage = .closed
        client.writeAndFlush(response).whenComplete { _ in client.close(promise: nil) }
    }

    private static func hostAndPort(_ target: String) -> (String, Int)? {
        guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]) else {
            return nil
        }
        var host = String(target[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

    // MARK: - SOCKS5

    private func socksGreeting(context: ChannelHandlerContext, buffer: ByteBuffer) {
        guard buffer.readableBytes >= 2, let count = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt8.self),
            buffer.readableBytes >= 2 + Int(count)
        else {
            stage = .head(buffer)
            return
        }
        var rest = buffer
        rest.moveReaderIndex(forwardBy: 2 + Int(count))
        var reply = context.channel.allocator.buffer(capacity: 2)
        reply.writeBytes([5, 0])  // version 5, no authentication
        context.writeAndFlush(wrapOutboundOut(reply), promise: nil)
        stage = .socksRequest(ByteBuffer())
        if rest.readableBytes > 0 { socksRequest(context: context, buffer: rest) }
    }

    private func socksRequest(context: ChannelHandlerContext, buffer: ByteBuffer) {
        let bytes = Array(buffer.readableBytesView)
        guard bytes.count >= 5 else {
            stage = .socksRequest(buffer)
            return
        }
        let host: String
        let addressEnd: Int
        switch bytes[3] {
        case 1:
            addressEnd = 8
            guard bytes.count >= addressEnd + 2 else { return stage = .socksRequest(buffer) }
            host = bytes[4..<8].map(String.init).joined(separator: ".")
        case 3:
            addressEnd = 5 + Int(bytes[4])
            guard bytes.count >= addressEnd + 2 else { return stage = .socksRequest(buffer) }
            host = String(decoding: bytes[5..<addressEnd], as: UTF8.self)
        default:
            return context.close(promise: nil)
        }
        guard bytes[1] == 1 else { return context.close(promise: nil) }  // CONNECT only
        let port = Int(bytes[addressEnd]) << 8 | Int(bytes[addressEnd + 1])
        state.record(LoopbackProxy.Record(method: "SOCKS5", target: "\(host):\(port)", headers: [], authorized: true))
        var rest = buffer
        rest.moveReaderIndex(forwardBy: addressEnd + 2)
        connect(context: context, host: host, port: port, pending: rest) { client in
            var reply = client.allocator.buffer(capacity: 10)
            reply.writeBytes([5, 0, 0, 1, 0, 0, 0, 0, 0, 0])
            client.writeAndFlush(reply, promise: nil)
        }
    }

    // MARK: - Relay

    /// Connects to the target; then `established` answers the client and
    /// `pending` goes to the target.
    private func connect(
        context: ChannelHandlerContext, host: String, port: Int, pending: ByteBuffer,
        established: @escaping @Sendable (any Channel) -> Void
    ) {
        stage = .connecting(pending: pending)
        let client = context.channel
        let loop = context.eventLoop
        ClientBootstrap(group: loop)
            .channelInitializer { peer in peer.pipeline.addHandler(ProxyBackHandler(client: client)) }
            .connect(host: host, port: port)
            .whenComplete { result in
                switch result {
                case .success(let peer):
                    guard case .connecting(let pending) = self.stage else {
                        peer.close(promise: nil)
                        return
                    }
                    self.stage = .relaying(peer)
                    established(client)
                    if pending.readableBytes > 0 { peer.writeAndFlush(pending, promise: nil) }
                case .failure:
                    self.respond(client: client, status: "502 Bad Gateway", extra: [])
                }
            }
    }
}

/// The target side of a relayed connection: bytes back to the client.
final class ProxyBackHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let client: any Channel

    init(client: any Channel) {
        self.client = client
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        client.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        client.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
