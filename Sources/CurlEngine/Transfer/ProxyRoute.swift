import Foundation

/// The proxy one transfer goes through (CURLOPT_PROXY and its credentials).
/// A class: a transfer without a proxy keeps one nil pointer for it.
/// Chosen per request by the core; part of the handle's shape, so a handle
/// keeps no proxy of an earlier transfer.
package final class ProxyRoute: Sendable, Equatable {
    /// "http://host:port" (https URLs go through a CONNECT tunnel, http ones
    /// are forwarded) or "socks5h://host:port" (names resolved by the proxy).
    package let url: String
    /// Credentials for the proxy only: libcurl sends them in
    /// Proxy-Authorization to the proxy, never to an origin.
    package let user: String?
    package let password: String?
    /// The one method to use with them; nil: whichever the proxy asks for
    /// (libcurl first asks without credentials, so Basic is never sent blind).
    package let scheme: TransferRequest.Authentication.Scheme?

    package init(url: String, user: String? = nil, password: String? = nil, scheme: TransferRequest.Authentication.Scheme? = nil) {
        self.url = url
        self.user = user
        self.password = password
        self.scheme = scheme
    }

    package static func == (lhs: ProxyRoute, rhs: ProxyRoute) -> Bool {
        lhs === rhs
            || (lhs.url == rhs.url && lhs.user == rhs.user && lhs.password == rhs.password && lhs.scheme == rhs.scheme)
    }
}
