import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The proxies a session's requests go through (`SessionConfiguration.proxy`),
/// as URLSession's `connectionProxyDictionary`: an HTTP proxy per scheme, or
/// SOCKS5, with hosts that are reached directly.
///
/// Nothing is read from the environment unless you ask:
/// `SessionConfiguration.proxy = .fromEnvironment()`.
public struct ProxyConfiguration: Sendable, Equatable {
    public struct Server: Sendable, Equatable, CustomStringConvertible {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// For http URLs: this HTTP proxy forwards the requests.
    public var http: Server?
    /// For https URLs: a CONNECT tunnel through this HTTP proxy; TLS runs
    /// end to end with the origin, and request headers stay inside it.
    public var https: Server?
    /// SOCKS5, for the URLs the two above do not cover; host names are
    /// resolved by the proxy.
    public var socks: Server?
    /// Hosts reached directly: "example.com" (that host), ".example.com" or
    /// "*.example.com" (that domain and its subdomains), "*" (every host).
    public var exceptions: [String]
    /// Credentials for the proxy, sent only to it, in answer to its 407 with
    /// the method it asks for (Basic, Digest, NTLM, Negotiate). Without
    /// them a 407 becomes a challenge (`URLProtectionSpace.isProxy()`).
    public var user: String?
    public var password: String?

    public init(
        http: Server? = nil, https: Server? = nil, socks: Server? = nil, exceptions: [String] = [],
        user: String? = nil, password: String? = nil
    ) {
        self.http = http
        self.https = https
        self.socks = socks
        self.exceptions = exceptions
        self.user = user
        self.password = password
    }

    /// One HTTP proxy for http and https URLs.
    public static func http(host: String, port: Int, exceptions: [String] = []) -> ProxyConfiguration {
        let server = Server(host: host, port: port)
        return ProxyConfiguration(http: server, https: server, exceptions: exceptions)
    }

    /// One SOCKS5 proxy for every URL.
    public static func socks(host: String, port: Int, exceptions: [String] = []) -> ProxyConfiguration {
        ProxyConfiguration(socks: Server(host: host, port: port), exceptions: exceptions)
    }

    /// How a request to `url` goes: through which proxy, or nil for directly.
    func route(for url: URL) -> (server: Server, isSOCKS: Bool)? {
        guard let host = url.host?.lowercased(), !isException(host) else { return nil }
        let isHTTPS = url.scheme?.lowercased() == "https"
        if let server = isHTTPS ? https : http { return (server, false) }
        if let socks { return (socks, true) }
        return nil
    }

    private func isException(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        for raw in exceptions {
            var pattern = raw.trimmingCharacters(in: .whitespaces).lowercased()
            if pattern == "*" { return true }
            if pattern.hasPrefix("*.") { pattern.removeFirst() }
            if pattern.hasPrefix(".") {
                let domain = String(pattern.dropFirst())
                if bare == domain || bare.hasSuffix(pattern) { return true }
            } else if !pattern.isEmpty, bare == pattern {
                return true
            }
        }
        return false
    }
}
