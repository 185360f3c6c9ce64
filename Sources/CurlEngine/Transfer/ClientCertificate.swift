import Foundation

/// A client certificate and its key as libcurl takes them (blobs): sent to
/// an https server that asks for one. Part of libcurl's TLS configuration
/// match, so a connection made with one identity (or none) never serves a
/// transfer with another.
package struct ClientCertificate: Sendable, Equatable {
    package enum Format: String, Sendable {
        case pem = "PEM"
        case pkcs12 = "P12"
    }

    package let format: Format
    package let certificate: Data
    /// PEM only: the key, when it is not in `certificate`'s data.
    package let privateKey: Data?
    package let password: String?

    package init(format: Format, certificate: Data, privateKey: Data?, password: String?) {
        self.format = format
        self.certificate = certificate
        self.privateKey = privateKey
        self.password = password
    }
}
