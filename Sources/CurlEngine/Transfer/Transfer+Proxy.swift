internal import CCurl
import Foundation

extension Transfer {
    /// The options of a transfer that goes through a proxy.
    func configureProxy(_ proxy: ProxyRoute, _ check: (CURLcode) -> Void) {
        // The CONNECT response is the proxy's, not the origin's: our head
        // parser must not see it. A 407 to it is read from
        // CURLINFO_HTTP_CONNECTCODE when the transfer fails.
        check(easy.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1))
        // Request headers (Authorization, cookies) never go to the proxy in
        // a CONNECT (libcurl's default, made explicit).
        check(easy.set(CURLOPT_HEADEROPT, Int(CURLHEADER_SEPARATE)))
        guard let user = proxy.user else { return }
        let bit: UInt
        switch proxy.scheme {
        case .basic?: bit = ccurl_auth_basic
        case .digest?: bit = ccurl_auth_digest
        case .ntlm?: bit = ccurl_auth_ntlm
        case .negotiate?: bit = ccurl_auth_negotiate
        case nil: bit = ccurl_auth_basic | ccurl_auth_digest | ccurl_auth_ntlm | ccurl_auth_negotiate
        }
        check(easy.set(CURLOPT_PROXYAUTH, Int(bitPattern: bit)))
        check(easy.set(CURLOPT_PROXYUSERNAME, user))
        check(easy.set(CURLOPT_PROXYPASSWORD, proxy.password ?? ""))
    }

    /// The methods a proxy offered in a 407 to the CONNECT, when that is
    /// how the transfer ended; nil otherwise.
    func proxyAuthenticationMethods() -> [TransferRequest.Authentication.Scheme]? {
        guard request.proxy != nil, easy.info(long: CURLINFO_HTTP_CONNECTCODE) == 407 else { return nil }
        let offered = UInt(bitPattern: easy.info(long: CURLINFO_PROXYAUTH_AVAIL) ?? 0)
        var schemes: [TransferRequest.Authentication.Scheme] = []
        // Strongest first, as a client that picks one would.
        if offered & ccurl_auth_negotiate != 0 { schemes.append(.negotiate) }
        if offered & ccurl_auth_ntlm != 0 { schemes.append(.ntlm) }
        if offered & ccurl_auth_digest != 0 { schemes.append(.digest) }
        if offered & ccurl_auth_basic != 0 { schemes.append(.basic) }
        return schemes
    }
}
