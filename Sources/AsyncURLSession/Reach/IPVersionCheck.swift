internal import CurlEngine
import Foundation

/// A URL whose host is an IP address of the version the configuration
/// excludes (`ipVersion`) can never connect. libcurl 7.88.1 fails such a
/// transfer only with "Couldn't connect to server" (`curl -6
/// http://127.0.0.1:PORT/` against a listening server), which hides why;
/// refused before the transfer instead, saying so.
enum IPVersionCheck {
    /// The reason `host` cannot be reached under `route`, or nil.
    static func problem(host: String, route: ConnectRoute) -> String? {
        // Overrides and sockets decide where the connection goes instead.
        guard route.ipVersion != .any, route.unixSocketPath == nil, route.connectTo == nil, route.resolve == nil
        else { return nil }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var v4 = in_addr()
        var v6 = in6_addr()
        if route.ipVersion == .v6Only, inet_pton(AF_INET, bare, &v4) == 1 {
            return "The URL's host \(bare) is an IPv4 address, and the configuration allows IPv6 only (ipVersion = .v6Only)."
        }
        if route.ipVersion == .v4Only, inet_pton(AF_INET6, bare, &v6) == 1 {
            return "The URL's host \(bare) is an IPv6 address, and the configuration allows IPv4 only (ipVersion = .v4Only)."
        }
        return nil
    }
}
