import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session's proxy, as a task's hops see it: which credential goes to
/// it, and the protection space of its 407.
enum ProxyAuthentication {
    /// The credential for the proxy: a handler's answer in this task, else
    /// one the session kept, else the proxy configuration's user and
    /// password. Nil: libcurl sends none and a 407 becomes a challenge.
    static func credential(on task: some PolicyHost) -> HopCredential? {
        let context = task.context
        if let answered = task.machine({ $0.connectionState?.proxyCredential }) ?? context.proxyAnswer.withLock({ $0 }) {
            return answered
        }
        guard let proxy = context.configuration.proxy, let user = proxy.user else { return nil }
        // No method: libcurl uses whichever the proxy asks for.
        return HopCredential(
            credential: URLCredential(user: user, password: proxy.password ?? "", persistence: .none), method: "")
    }

    /// The protection space of the proxy a request to `url` goes through;
    /// nil when it goes directly (then a 407 is an origin's response).
    static func space(
        for url: URL, realm: String?, method: String, in configuration: SessionConfiguration
    ) -> URLProtectionSpace? {
        guard let (server, isSOCKS) = configuration.proxy?.route(for: url) else { return nil }
        let type = isSOCKS
            ? NSURLProtectionSpaceSOCKSProxy
            : url.scheme?.lowercased() == "https" ? NSURLProtectionSpaceHTTPSProxy : NSURLProtectionSpaceHTTPProxy
        return URLProtectionSpace(
            proxyHost: server.host, port: server.port, type: type, realm: realm, authenticationMethod: method)
    }
}
