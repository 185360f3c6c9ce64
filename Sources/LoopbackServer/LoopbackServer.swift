// LoopbackServer: a real HTTP server, in-process, on 127.0.0.1 only, for tests, the CLI demo
// and benchmarks.
//
// Design note
// - One MultiThreadedEventLoopGroup per server, owned by it and shut down by shutdown(), so a
//   test's server never shares threads or state with another test's server.
// - Each TCP connection gets an id (1, 2, ...) from ConnectionRegistry when it is accepted; the
//   registry also keeps the open channels so shutdown() can close them.
// - Plain TCP speaks HTTP/1.1. With TLS, ALPN picks HTTP/2 or HTTP/1.1 (PipelineSetup.swift,
//   HTTP2Setup.swift). HTTP/2 streams are converted to HTTP/1 request/response parts by
//   NIOHTTP2's HTTP2FramePayloadToHTTP1ServerCodec, so one RequestHandler and one Router serve
//   both protocols.
// - Routes never touch the channel: they turn a request into a ResponsePlan (plain data), and
//   RequestHandler is the only writer. That keeps writability (backpressure), HEAD, keep-alive,
//   timers and client disconnects in one place instead of in every route.
// - Byte routes stream a deterministic pattern (PatternBody.swift) computed per piece, so a
//   1 GiB body costs no memory and any misplaced byte is detectable by the client.
// - Per-server state that routes need across connections (Digest nonce key, the count of
//   Authorization attempts) lives in one AuthState, handed to every RequestHandler.
// - Nothing is logged: a client that goes away just closes its channel.
//
// Routes (any method; HEAD gets the GET head; bad parameters 400, unknown paths 404; over
// HTTP/2 the same unless HTTP2Setup.swift says otherwise):
// - Bytes: /bytes/N, /chunked/N, /drip/N, /stall/N, /stall-headers, /drop/N[?how=reset|garbage],
//   /close-delimited/N, /gzip/N, /range/N (ByteRoutes.swift, RangeRoute.swift).
// - Requests: /echo (method, headers, body length and SHA-256), /echo-body (EchoRoutes.swift).
// - Status and headers: /status/CODE, /delay/MS, /close-idle/MS, /response-headers, /trailers, /headers/big, /connection,
//   /garbage (MiscRoutes.swift).
// - Retries: /flaky/KEY?fail=N[&status=CODE|&how=reset][&retry-after=V] (FlakyRoute.swift).
// - Redirects: /redirect/N, /redirect-to, /redirect-loop, /redirect-no-location,
//   /redirect-echo, /cross-origin-redirect (RedirectRoutes.swift); /redirect-raw, whose
//   Location is written unchecked, HTTP/1.1 only (RawRedirectRoute.swift).
// - Authentication: /auth/basic, /auth/digest, /auth/multi, /auth/ntlm, /auth/no-challenge,
//   /auth/malformed, /auth/basic-then-close, /proxy-auth (AuthRoutes.swift; Digest in Auth/).
// - Cookies: /cookies/set, /cookies/echo (CookieRoutes.swift).
// - Server push: /multipart-replace (MultipartRoute.swift).

import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

public final class LoopbackServer: Sendable {
    /// Port the listener is bound to on 127.0.0.1 (chosen by the kernel);
    /// 0 on a Unix socket.
    public let port: Int
    /// The Unix socket listened on (`Options.unixSocketPath`), removed at shutdown.
    public let unixSocketPath: String?
    /// "http://127.0.0.1:PORT" or "https://127.0.0.1:PORT".
    public let baseURL: URL
    /// With TLS: the self-signed certificate (PEM) a client must trust; it is its own root.
    public let certificatePEM: Data?
    /// With TLS: SHA-256 of the certificate's public key (SubjectPublicKeyInfo, DER), base64,
    /// as a client pins it.
    public let publicKeySHA256: String?
    /// With `requireClientCertificate`: the client certificate and its
    /// private key (PEM) the server accepts.
    public let clientIdentityPEM: (certificate: Data, privateKey: Data)?

    private let group: MultiThreadedEventLoopGroup
    private let serverChannel: any Channel
    private let registry: ConnectionRegistry
    private let auth: AuthState
    private let flaky: FlakyCounters
    /// Set once shutdown has started; makes shutdown() idempotent and tells deinit what is left.
    private let isShutDown = Mutex(false)

    private init(
        port: Int,
        baseURL: URL,
        certificatePEM: Data?,
        publicKeySHA256: String?,
        clientIdentityPEM: (certificate: Data, privateKey: Data)?,
        group: MultiThreadedEventLoopGroup,
        serverChannel: any Channel,
        registry: ConnectionRegistry,
        auth: AuthState,
        flaky: FlakyCounters,
        unixSocketPath: String?
    ) {
        self.unixSocketPath = unixSocketPath
        self.port = port
        self.baseURL = baseURL
        self.certificatePEM = certificatePEM
        self.publicKeySHA256 = publicKeySHA256
        self.clientIdentityPEM = clientIdentityPEM
        self.group = group
        self.serverChannel = serverChannel
        self.registry = registry
        self.auth = auth
        self.flaky = flaky
    }

    /// Starts a server on 127.0.0.1, on an ephemeral port unless `options.port` names one.
    public static func start(_ options: Options = Options()) async throws -> LoopbackServer {
        // The certificate is made before any thread is started, so a failure leaks nothing.
        let tls = try options.tls ? TLSSetup(options: options) : nil
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let registry = ConnectionRegistry()
        let auth = AuthState()
        let flaky = FlakyCounters()
        do {
            let connectionSetup = PipelineSetup(tls: tls, registry: registry, auth: auth, flaky: flaky)
            let bootstrap = ServerBootstrap(group: group)
                // Many tests open hundreds of connections at once; a short backlog would make
                // the kernel drop SYNs and the clients retry after a second.
                .serverChannelOption(.backlog, value: 4096)
                .childChannelInitializer { channel in
                    connectionSetup.configure(channel)
                }
            let channel: any Channel
            let port: Int
            let baseURL: URL?
            if let path = options.unixSocketPath {
                // A Unix socket has no Nagle to turn off and no address to reuse.
                channel = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
                port = 0
                let host = path.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~")))
                baseURL = host.flatMap { URL(string: "\(tls == nil ? "http" : "https")+unix://\($0)") }
            } else {
                channel = try await bootstrap
                    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                    .bind(host: "127.0.0.1", port: options.port)
                    .get()
                port = channel.localAddress?.port ?? 0
                baseURL = port == 0 ? nil : URL(string: "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)")
            }
            guard let baseURL else {
                try? await channel.close()
                throw LoopbackServerError.noLocalAddress
            }
            return LoopbackServer(
                port: port,
                baseURL: baseURL,
                certificatePEM: tls.map { Data($0.certificatePEM.utf8) },
                publicKeySHA256: tls?.publicKeySHA256,
                clientIdentityPEM: tls?.clientIdentity.map {
                    (certificate: Data($0.certificatePEM.utf8), privateKey: Data($0.privateKeyPEM.utf8))
                },
                group: group,
                serverChannel: channel,
                registry: registry,
                auth: auth,
                flaky: flaky,
                unixSocketPath: options.unixSocketPath
            )
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// `baseURL` followed by `pathAndQuery`, e.g. `url("/bytes/10")` (a missing leading "/" is
    /// added).
    public func url(_ pathAndQuery: String) -> URL {
        let suffix = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
        let base = baseURL.absoluteString
        if let url = URL(string: base + suffix) {
            return url
        }
        // Characters URL(string:) refuses (spaces, quotes...) get escaped rather than dropped.
        if let escaped = suffix.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed),
            let url = URL(string: base + escaped)
        {
            return url
        }
        // Only a caller's bad literal gets here, never anything a network client sends.
        preconditionFailure("LoopbackServer.url: cannot form a URL from \(pathAndQuery.debugDescription)")
    }

    /// TCP connections accepted so far (for connection-reuse tests).
    public var acceptedConnections: Int {
        registry.acceptedCount
    }

    /// TCP connections open now, counted on the server's side (for tests that
    /// must wait until the server has closed one, not guess how long it takes).
    public var openConnections: Int {
        registry.openCount
    }

    /// Requests to any /auth/... route that carried an Authorization header, counted when
    /// their head arrives (for tests of how often a client retries wrong credentials).
    /// Requests /flaky/KEY received for KEY so far (every attempt, failed or not).
    public func flakyRequests(_ key: String) -> Int {
        flaky.count(key)
    }

    public var authorizationAttempts: Int {
        auth.authorizationAttempts
    }

    /// Closes the listener and every open connection, then stops the server's thread.
    /// Calling it again (or concurrently) returns at once.
    public func shutdown() async throws {
        let first = isShutDown.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        // Close the listener first so no connection slips in between the two steps; the
        // registry refuses (closes) any connection that is still being set up.
        try? await serverChannel.close()
        if let unixSocketPath { unlink(unixSocketPath) }
        let connections = registry.closeRegistration()
        for connection in connections {
            connection.close(promise: nil)
        }
        for connection in connections {
            try? await connection.closeFuture.get()
        }
        try await group.shutdownGracefully()
    }

    deinit {
        // A forgotten shutdown() must not crash nor block: stop the thread in the background;
        // that also closes the listener and all connections.
        let needsShutdown = isShutDown.withLock { !$0 }
        if needsShutdown {
            group.shutdownGracefully { _ in }
        }
    }
}

/// Errors thrown by `LoopbackServer.start`.
public enum LoopbackServerError: Error, Sendable {
    /// The listener has no local address (should not happen for a bound TCP socket).
    case noLocalAddress
}
