import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A protection space as a value: what makes two spaces the same (scheme,
/// host in any case, port, realm, method, proxy or not). corelibs'
/// `URLProtectionSpace` does not hash equal spaces made elsewhere alike, so
/// the stores key by this instead.
struct ProtectionSpaceKey: Hashable, Sendable, Codable {
    var scheme: String
    var host: String
    var port: Int
    var realm: String
    var method: String
    var isProxy: Bool

    init(_ space: URLProtectionSpace) {
        scheme = (space.isProxy() ? space.proxyType : space.protocol)?.lowercased() ?? ""
        host = space.host.lowercased()
        port = space.port
        realm = space.realm ?? ""
        method = space.authenticationMethod
        isProxy = space.isProxy()
    }

    /// Foundation's space for this key.
    var space: URLProtectionSpace {
        if isProxy {
            return URLProtectionSpace(
                proxyHost: host, port: port, type: scheme, realm: realm.isEmpty ? nil : realm,
                authenticationMethod: method)
        }
        return URLProtectionSpace(
            host: host, port: port, protocol: scheme.isEmpty ? nil : scheme, realm: realm.isEmpty ? nil : realm,
            authenticationMethod: method)
    }
}
