internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client certificate with its private key, for servers that ask for
/// one during the TLS handshake (mutual TLS). Linux has no keychain
/// identity (`SecIdentity`): the certificate and key are given as bytes.
public struct ClientIdentity: Sendable, Equatable {
    let certificate: ClientCertificate

    /// A PEM certificate (it may carry the key, and intermediate
    /// certificates after it) and, when separate, its PEM private key;
    /// `password` for an encrypted key.
    public static func pem(certificate: Data, privateKey: Data? = nil, password: String? = nil) -> ClientIdentity {
        ClientIdentity(certificate: ClientCertificate(
            format: .pem, certificate: certificate, privateKey: privateKey, password: password))
    }

    /// A PKCS#12 archive (`.p12`, `.pfx`) holding the certificate and key.
    public static func pkcs12(_ archive: Data, password: String? = nil) -> ClientIdentity {
        ClientIdentity(certificate: ClientCertificate(
            format: .pkcs12, certificate: archive, privateKey: nil, password: password))
    }
}
