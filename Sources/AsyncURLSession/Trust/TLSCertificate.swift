internal import CurlEngine
import Foundation

/// One certificate of a server's chain, as a server-trust challenge shows it
/// (`ServerTrust.certificates`). Apple's platforms hand out `SecCertificate`;
/// Linux has no Security framework, so this carries the DER and what a
/// handler usually checks, already read.
public struct TLSCertificate: Sendable, Hashable, CustomStringConvertible {
    /// The certificate as sent (X.509, DER).
    public let derData: Data
    /// The subject's distinguished name, RFC 2253 style ("CN=example.com,O=Example").
    public let subject: String
    public let issuer: String
    public let notValidBefore: Date
    public let notValidAfter: Date
    /// SHA-256 of `derData`.
    public let sha256Fingerprint: Data
    /// SHA-256 of the SubjectPublicKeyInfo: what public-key pins name.
    public let publicKeySHA256: Data
    /// "DNS:name" and "IP:address" entries of the subject alternative names.
    public let subjectAlternativeNames: [String]

    /// Nil when `der` is not a certificate.
    public init?(derData der: Data) {
        guard let summary = CertificateSummary(der: der) else { return nil }
        derData = der
        subject = summary.subject
        issuer = summary.issuer
        notValidBefore = summary.notValidBefore
        notValidAfter = summary.notValidAfter
        sha256Fingerprint = summary.sha256
        publicKeySHA256 = summary.publicKeySHA256
        subjectAlternativeNames = summary.alternativeNames
    }

    /// "sha256//<base64>", as `SessionConfiguration.pinnedPublicKeys` takes it.
    public var publicKeyPin: String { "sha256//" + publicKeySHA256.base64EncodedString() }

    /// Whether the certificate is within its validity dates at `date`.
    public func isValid(at date: Date = Date()) -> Bool { notValidBefore <= date && date <= notValidAfter }

    public var description: String { "\(subject) (issued by \(issuer))" }
}
