import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Apple's names for the TLS authentication methods. swift-corelibs-foundation
// declares them unavailable (they rely on the Security framework); these
// available declarations take their place, so code written for Apple's
// platforms compiles unchanged.

/// A server-trust challenge: `challenge.protectionSpace.serverTrust` holds
/// the chain to judge.
public let NSURLAuthenticationMethodServerTrust = "NSURLAuthenticationMethodServerTrust"
/// A client-certificate challenge.
public let NSURLAuthenticationMethodClientCertificate = "NSURLAuthenticationMethodClientCertificate"

/// A server-trust challenge's protection space: Foundation's own with the
/// `ServerTrust` attached (read through `URLProtectionSpace.serverTrust`).
final class ServerTrustProtectionSpace: URLProtectionSpace, @unchecked Sendable {
    // @unchecked: `trust` is a `let` of a Sendable class, and the superclass's
    // state is set once in its initializer and never changed.
    let trust: ServerTrust

    init(trust: ServerTrust) {
        self.trust = trust
        super.init(
            host: trust.host, port: trust.port, protocol: "https", realm: nil,
            authenticationMethod: NSURLAuthenticationMethodServerTrust)
    }

    required init?(coder: NSCoder) { nil }
}

extension URLProtectionSpace {
    /// The server's chain and default verdict, for a server-trust challenge
    /// (nil for other methods): Linux's `serverTrust`, typed `ServerTrust`
    /// instead of `SecTrust`.
    public var serverTrust: ServerTrust? { (self as? ServerTrustProtectionSpace)?.trust }
}

extension URLCredential {
    /// A credential that trusts `trust`'s chain for its host: the answer to a
    /// server-trust challenge that accepts a connection default verification
    /// would refuse (a self-signed or private server). As Apple's
    /// `URLCredential(trust:)`, with `ServerTrust` for `SecTrust`.
    public convenience init(trust: ServerTrust) {
        // Foundation's URLCredential has no room for a trust object: the
        // leaf's fingerprint rides in the fields, under a user name no
        // password credential has (it starts with a NUL).
        let fingerprint = trust.leaf?.sha256Fingerprint.base64EncodedString() ?? ""
        self.init(user: URLCredential.trustMarker, password: fingerprint, persistence: .forSession)
    }

    static let trustMarker = "\u{0}server-trust"

    /// The SHA-256 of the leaf a `URLCredential(trust:)` trusts; nil for
    /// other credentials.
    var trustedLeafSHA256: Data? {
        guard user == URLCredential.trustMarker, let password else { return nil }
        return Data(base64Encoded: password)
    }
}
