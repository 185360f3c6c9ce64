import NIOCore
import NIOSSL

/// The server side of TLS: the generated certificate and the NIOSSL context that presents it.
struct TLSSetup: Sendable {
    let certificatePEM: String
    /// The key's pin (SHA-256 of its SubjectPublicKeyInfo, base64).
    let publicKeySHA256: String
    /// With `requireClientCertificate`: the one identity the server accepts.
    let clientIdentity: SelfSignedCertificate?
    let context: NIOSSLContext
    /// Whether ALPN offers "h2" (then HTTP2Setup decides per connection).
    let offersHTTP2: Bool

    init(options: LoopbackServer.Options) throws {
        let generated = try SelfSignedCertificate(kind: options.certificate)
        let chain = try generated.presentedChainPEM.map {
            NIOSSLCertificateSource.certificate(try NIOSSLCertificate(bytes: Array($0.utf8), format: .pem))
        }
        let key = try NIOSSLPrivateKey(bytes: Array(generated.privateKeyPEM.utf8), format: .pem)

        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain,
            privateKey: .privateKey(key)
        )
        configuration.applicationProtocols = options.http2 ? ["h2", "http/1.1"] : ["http/1.1"]
        if options.tls12Only { configuration.maximumTLSVersion = .tlsv12 }
        var clientIdentity: SelfSignedCertificate?
        if options.requireClientCertificate {
            // Only connections presenting this (self-signed) client
            // certificate complete the handshake.
            let identity = try SelfSignedCertificate(clientNamed: "AsyncURLSession test client")
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates([
                try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)
            ])
            clientIdentity = identity
        }
        self.clientIdentity = clientIdentity
        // NIOSSL waits this long for the client's close_notify when the server closes. Clients
        // that just drop idle connections would otherwise hold shutdown() for the default 5 s.
        configuration.shutdownTimeout = .milliseconds(200)

        self.certificatePEM = generated.certificatePEM
        self.publicKeySHA256 = generated.publicKeySHA256
        self.context = try NIOSSLContext(configuration: configuration)
        self.offersHTTP2 = options.http2
    }
}
