import Crypto
import Foundation
import X509

/// A freshly generated P-256 key and a self-signed certificate for it, both as PEM.
///
/// The certificate is its own root (basicConstraints CA:true, keyCertSign), so a client trusts
/// it by adding exactly this PEM as a CA, with no separate CA to generate or ship.
struct SelfSignedCertificate {
    let certificatePEM: String
    let privateKeyPEM: String
    /// SHA-256 of the public key's SubjectPublicKeyInfo (DER), base64: what
    /// a client pins (libcurl's "sha256//" form without the prefix).
    let publicKeySHA256: String

    /// A client identity instead of a server certificate: clientAuth, no
    /// names beyond its subject.
    init(clientNamed commonName: String, now: Date = Date()) throws {
        let key = P256.Signing.PrivateKey()
        let certificateKey = Certificate.PrivateKey(key)
        let name = try DistinguishedName {
            CommonName(commonName)
            OrganizationName("AsyncURLSession tests")
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            try ExtendedKeyUsage([.clientAuth])
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: certificateKey.publicKey,
            notValidBefore: now - 3600, notValidAfter: now + 30 * 24 * 3600, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: certificateKey)
        certificatePEM = try certificate.serializeAsPEM().pemString
        privateKeyPEM = key.pemRepresentation
        publicKeySHA256 = Data(SHA256.hash(data: key.publicKey.derRepresentation)).base64EncodedString()
    }

    init(kind: LoopbackServer.CertificateKind, now: Date = Date()) throws {
        let key = P256.Signing.PrivateKey()
        let certificateKey = Certificate.PrivateKey(key)
        let name = try DistinguishedName {
            CommonName("AsyncURLSession LoopbackServer")
            OrganizationName("AsyncURLSession tests")
        }

        let hour: TimeInterval = 3600
        let day: TimeInterval = 24 * hour
        let notBefore: Date
        let notAfter: Date
        switch kind {
        case .valid, .wrongHost:
            // An hour of slack for clocks that disagree a little.
            notBefore = now - hour
            notAfter = now + 30 * day
        case .expired:
            notBefore = now - 60 * day
            notAfter = now - 30 * day
        }

        let names: [GeneralName]
        switch kind {
        case .valid, .expired:
            names = [.ipAddress(.init(contentBytes: [127, 0, 0, 1])), .dnsName("localhost")]
        case .wrongHost:
            // Neither 127.0.0.1 nor localhost: host verification must fail, nothing else.
            names = [.dnsName("example.invalid")]
        }

        let keyIdentifier = SubjectKeyIdentifier(hash: certificateKey.publicKey)
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            try ExtendedKeyUsage([.serverAuth])
            keyIdentifier
            AuthorityKeyIdentifier(keyIdentifier: keyIdentifier.keyIdentifier)
            SubjectAlternativeNames(names)
        }

        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: certificateKey.publicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: certificateKey
        )
        certificatePEM = try certificate.serializeAsPEM().pemString
        privateKeyPEM = key.pemRepresentation
        publicKeySHA256 = Data(SHA256.hash(data: key.publicKey.derRepresentation)).base64EncodedString()
    }
}
