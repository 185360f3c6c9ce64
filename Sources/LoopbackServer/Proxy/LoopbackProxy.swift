import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A small proxy on 127.0.0.1 for tests of clients that go through one:
/// HTTP forwarding (absolute-form requests), CONNECT tunnels, and SOCKS5
/// (no authentication, CONNECT only), with optional Basic proxy
/// authentication for the HTTP forms. It records what each client asked.
///
/// Forwarded requests are sent to the origin with `Connection: close` and
/// without the proxy's own fields (Proxy-Authorization, Proxy-Connection),
/// as a proxy consumes them; after that, and after CONNECT or SOCKS5, bytes
/// are relayed both ways untouched until either side closes.
public final class LoopbackProxy: Sendable {
    /// One request the proxy received (the first bytes of a connection).
    public struct Record: Sendable {
        /// "GET", "CONNECT", ... or "SOCKS5".
        public var method: String
        /// The absolute URL, "host:port" for CONNECT and SOCKS5.
        public var target: String
        /// Header fields as received (none for SOCKS5).
        public var headers: [(name: String, value: String)]
        /// Whether it carried the credentials the proxy requires (true when none are required).
        public var authorized: Bool

        public func value(of name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    public let port: Int
    /// "http://127.0.0.1:PORT".
    public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let state: ProxyState

    private init(port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel, state: ProxyState) {
        self.port = port
        self.group = group
        self.channel = channel
        self.state = state
    }

    /// Starts a proxy; with `credentials`, HTTP requests and CONNECTs without
    /// matching Basic `Proxy-Authorization` get 407.
    public static func start(requiring credentials: (user: String, password: String)? = nil) async throws -> LoopbackProxy {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let expected = credentials.map { "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString() }
        let state = ProxyState(expectedAuthorization: expected)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    state.opened(channel)
                    return channel.pipeline.addHandler(ProxyFrontHandler(state: state))
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = channel.localAddress?.port else { throw LoopbackServerError.noLocalAddress }
            return LoopbackProxy(port: port, group: group, channel: channel, state: state)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Everything received so far, in order.
    public var records: [Record] { state.records }

    public func shutdown() async throws {
        try? await channel.close()
        state.closeAll()
        try await group.shutdownGracefully()
    }
}

/// What the proxy's connections share.
final class ProxyState: Sendable {
    let expectedAuthorization: String?
    private let recorded = Mutex<[LoopbackProxy.Record]>([])
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    init(expectedAuthorization: String?) {
        self.expectedAuthorization = expectedAuthorization
    }

    var records: [LoopbackProxy.Record] { recorded.withLock { $0 } }

    func record(_ record: LoopbackProxy.Record) { recorded.withLock { $0.append(record) } }

    func opened(_ channel: any Channel) {
        channels.withLock { $0[ObjectIdentifier(channel)] = channel }
        channel.closeFuture.whenComplete { [self] _ in
            _ = channels.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
        }
    }

    func closeAll() {
        for channel in channels.withLock({ Array($0.values) }) { channel.close(promise: nil) }
    }
}
