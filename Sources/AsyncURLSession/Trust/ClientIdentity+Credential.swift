internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLCredential {
    /// A credential that presents `identity`: the answer to a
    /// client-certificate challenge, as Apple's
    /// `URLCredential(identity:certificates:persistence:)` with a
    /// `ClientIdentity` for the keychain's `SecIdentity`. `.forSession` and
    /// `.permanent` answers are reused by the session for later connections
    /// to the same host and port.
    public convenience init(identity: ClientIdentity, persistence: URLCredential.Persistence = .forSession) {
        // Foundation's URLCredential keeps only strings: the identity rides
        // encoded in the password, under a user name no password credential
        // has (it starts with a NUL).
        self.init(user: URLCredential.identityMarker, password: identity.encoded, persistence: persistence)
    }

    static let identityMarker = "\u{0}client-identity"

    /// The identity of a `URLCredential(identity:)`; nil for other credentials.
    var clientIdentity: ClientIdentity? {
        guard user == URLCredential.identityMarker, let password else { return nil }
        return ClientIdentity(encoded: password)
    }
}

extension ClientIdentity {
    private struct Encoding: Codable {
        var format: String
        var certificate: Data
        var privateKey: Data?
        var password: String?
    }

    var encoded: String {
        let encoding = Encoding(
            format: certificate.format == .pkcs12 ? "p12" : "pem", certificate: certificate.certificate,
            privateKey: certificate.privateKey, password: certificate.password)
        return (try? JSONEncoder().encode(encoding)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    init?(encoded: String) {
        guard let encoding = try? JSONDecoder().decode(Encoding.self, from: Data(encoded.utf8)) else { return nil }
        switch encoding.format {
        case "p12": self = .pkcs12(encoding.certificate, password: encoding.password)
        case "pem":
            self = .pem(certificate: encoding.certificate, privateKey: encoding.privateKey, password: encoding.password)
        default: return nil
        }
    }
}
