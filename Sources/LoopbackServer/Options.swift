extension LoopbackServer {
    /// How a server is started. Every field has a default, so `Options()` is plain HTTP/1.1.
    public struct Options: Sendable {
        /// Serve HTTPS with a certificate generated at start (see `certificatePEM`).
        public var tls: Bool
        /// With `tls`: offer "h2" and "http/1.1" through ALPN. Ignored without TLS: the server
        /// never speaks cleartext HTTP/2 (no h2c, no prior knowledge).
        public var http2: Bool
        /// Which certificate to generate, for TLS failure tests.
        public var certificate: CertificateKind
        /// With `tls`: speak TLS 1.2 at most (default: up to 1.3), for tests
        /// of a client's TLS version bounds.
        public var tls12Only: Bool
        /// The port to listen on; 0 (the default) lets the kernel choose. A
        /// fixed one is for servers that come up late (tests of waiting
        /// for connectivity).
        public var port: Int
        /// With `tls`: complete only handshakes in which the client presents
        /// the identity the server generated (`clientIdentityPEM`).
        public var requireClientCertificate: Bool
        /// Listen on this Unix domain socket path instead of TCP on
        /// 127.0.0.1 (a file it replaces and removes at shutdown; at most
        /// 107 bytes). `baseURL` is then `http+unix://` with the path
        /// percent-encoded as its host, and `port` is 0.
        public var unixSocketPath: String?

        public init(
            tls: Bool = false, http2: Bool = true, certificate: CertificateKind = .valid, tls12Only: Bool = false,
            port: Int = 0, requireClientCertificate: Bool = false, unixSocketPath: String? = nil
        ) {
            self.requireClientCertificate = requireClientCertificate
            self.unixSocketPath = unixSocketPath
            self.tls = tls
            self.http2 = http2
            self.certificate = certificate
            self.tls12Only = tls12Only
            self.port = port
        }
    }

    /// The self-signed certificate a TLS server presents.
    public enum CertificateKind: Sendable {
        /// Valid from an hour ago for 30 days; SAN IP 127.0.0.1 and DNS localhost.
        case valid
        /// Valid from 60 days ago to 30 days ago; same names as `.valid`.
        case expired
        /// Currently valid, but its only SAN is DNS example.invalid, so verifying the host fails.
        case wrongHost
        /// A leaf (not a CA; same names and dates as `.valid`) issued by a
        /// test CA generated with it ("AsyncURLSession Test CA"). The server
        /// presents leaf and CA; `certificatePEM` is the CA, the root to trust.
        case issuedByTestCA
    }
}
