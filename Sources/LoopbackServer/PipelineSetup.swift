import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL
import NIOWebSocket

/// Builds the pipeline of each accepted connection, after SocketEdgeHandler
/// (the fault routes' way to the raw socket):
/// - plain TCP: HTTP/1.1 codec -> RequestHandler
/// - TLS: NIOSSLServerHandler, then, by ALPN, the HTTP/1.1 pipeline or HTTP2Setup's.
struct PipelineSetup: Sendable {
    let tls: TLSSetup?
    let registry: ConnectionRegistry
    let auth: AuthState
    let flaky: FlakyCounters

    func configure(_ channel: any Channel) -> EventLoopFuture<Void> {
        let connectionID = registry.register(channel)
        // Runs on the channel's event loop (childChannelInitializer), so the synchronous
        // pipeline operations apply directly.
        let tlsAdded = channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(SocketEdgeHandler())
            if let tls {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls.context))
            }
        }
        guard let tls, tls.offersHTTP2 else {
            return tlsAdded.flatMapThrowing {
                try Self.configureHTTP1(channel, connectionID: connectionID, auth: auth, flaky: flaky)
            }
        }
        return tlsAdded.flatMap {
            // ALPN decides; no protocol negotiated (a client without ALPN) means HTTP/1.1.
            channel.configureHTTP2SecureUpgrade(
                h2ChannelConfigurator: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try HTTP2Setup.configure(channel, connectionID: connectionID, auth: auth, flaky: flaky)
                    }
                },
                http1ChannelConfigurator: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try Self.configureHTTP1(channel, connectionID: connectionID, auth: auth, flaky: flaky)
                    }
                }
            )
        }
    }

    /// HTTP/1.1 with NIO's pipelining assistance (requests are handed over one at a time, the
    /// next only after the previous response ended) and its protocol error handler (a request
    /// that does not parse gets a 400 and the connection is closed).
    static func configureHTTP1(_ channel: any Channel, connectionID: Int, auth: AuthState, flaky: FlakyCounters) throws {
        let sync = channel.pipeline.syncOperations
        let handler = RequestHandler(connectionID: connectionID, transport: .http1, auth: auth, flaky: flaky)
        // /ws/... upgrades to WebSocket (WebSocketRoutes.swift); the request
        // handler leaves the pipeline when it does.
        let upgrade: NIOHTTPServerUpgradeSendableConfiguration = (
            upgraders: [WebSocketRoutes.upgrader()],
            completionHandler: { context in
                context.pipeline.removeHandler(name: "loopback-request", promise: nil)
            }
        )
        try sync.configureHTTPServerPipeline(
            withPipeliningAssistance: true, withServerUpgrade: upgrade, withErrorHandling: true)
        try sync.addHandler(handler, name: "loopback-request")
    }
}
