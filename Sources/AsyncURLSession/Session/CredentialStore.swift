import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Credentials a session remembers per protection space (the ones answered
/// with persistence `.forSession` or `.permanent`). In memory for now:
/// persistent storage for default sessions comes with the storage work.
final class CredentialStore: Sendable {
    private let credentials = Mutex<[String: URLCredential]>([:])

    static func key(for space: URLProtectionSpace) -> String {
        let kind = space.isProxy() ? "proxy-\(space.proxyType ?? "")" : space.protocol ?? ""
        return "\(kind)://\(space.host.lowercased()):\(space.port)|\(space.realm ?? "")|\(space.authenticationMethod)"
    }

    func credential(for space: URLProtectionSpace) -> URLCredential? {
        credentials.withLock { $0[Self.key(for: space)] }
    }

    func set(_ credential: URLCredential, for space: URLProtectionSpace) {
        credentials.withLock { $0[Self.key(for: space)] = credential }
    }

    func removeAll() {
        credentials.withLock { $0.removeAll() }
    }
}

/// The credential a hop sends, and with which method.
struct HopCredential: Sendable {
    var credential: URLCredential
    /// An NSURLAuthenticationMethod* name.
    var method: String
}
