import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// The peer: SwiftNIO's WebSocket client (NIOWebSocket, what
/// AsyncHTTPClient's stack is built from; AsyncHTTPClient itself has no
/// WebSocket client), through its typed upgrade pipeline and NIOAsyncChannel.
struct NIOEchoClient: EchoClient {
    let name = "SwiftNIO NIOWebSocket client"

    private enum Upgrade: Sendable {
        case socket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    func roundTrips(url: URL, message: Data, count: Int, window: Int) async throws -> Duration {
        guard let host = url.host, let port = url.port else { throw EchoClientError("no host or port in \(url)") }
        let path = url.path.isEmpty ? "/" : url.path
        let upgrade = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: 1 << 24) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            .socket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                        }
                    }
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "\(host):\(port)")
                    headers.add(name: "Content-Length", value: "0")
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                        upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers),
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.refused) })
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: .init(upgradeConfiguration: configuration))
                }
            }
        guard case .socket(let channel) = try await upgrade.get() else { throw EchoClientError("not upgraded") }
        let payload = ByteBuffer(bytes: message)
        return try await channel.executeThenClose { inbound, outbound in
            var frames = inbound.makeAsyncIterator()
            let elapsed = try await EchoLoop.run(
                message: message, count: count, window: window,
                send: { _ in
                    try await outbound.write(WebSocketFrame(
                        fin: true, opcode: .binary, maskKey: .random(), data: payload))
                },
                receive: {
                    while let frame = try await frames.next() {
                        if frame.opcode == .binary { return frame.unmaskedData.readableBytes }
                    }
                    throw EchoClientError("the server closed")
                })
            var close = ByteBuffer()
            close.write(webSocketErrorCode: .normalClosure)
            try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: close))
            return elapsed
        }
    }
}
