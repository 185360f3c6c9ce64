import Crypto
import Foundation
import X509

/// A freshly generated P-256 key and a self-signed certificate for it, both as PEM.
///
/// The certificate is its own root (basicConstraints CA:true, keyCertSign), so a client trusts
/// it by adding exactly this PEM as a CA, with no separate CA to generate or ship.
struct SelfSignedCertificate {
    /// The root a client trusts: the certificate itself, or the test CA
    /// that issued it (`.issuedByTestCA`).
    let certificatePEM: String
    /// What the server presents, leaf first.
    let presentedChainPEM: [String]
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
        presentedChainPEM = [certificatePEM]
        privateKeyPEM = key.pemRepresentation
        publicKeySHA256 = Data(SHA256.hash(data: key.publicKey.derRepresentation)).base64EncodedString()
    }

    /// A leaf issued by a CA generated here (see `CertificateKind.issuedByTestCA`).
    private init(issuedByTestCAAt now: Date) throws {
        let caKey = P256.Signing.PrivateKey()
        let caCertificateKey = Certificate.PrivateKey(caKey)
        let caName = try DistinguishedName {
            CommonName("AsyncURLSession Test CA")
            OrganizationName("AsyncURLSession tests")
        }
        let caIdentifier = SubjectKeyIdentifier(hash: caCertificateKey.publicKey)
        let ca = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: caCertificateKey.publicKey,
            notValidBefore: now - 3600, notValidAfter: now + 30 * 24 * 3600, issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                caIdentifier
            },
            issuerPrivateKey: caCertificateKey)

        let key = P256.Signing.PrivateKey()
        let leafKey = Certificate.PrivateKey(key)
        let leafName = try DistinguishedName {
            CommonName("localhost")
            OrganizationName("AsyncURLSession tests")
        }
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: leafKey.publicKey,
            notValidBefore: now - 3600, notValidAfter: now + 30 * 24 * 3600, issuer: caName, subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectKeyIdentifier(hash: leafKey.publicKey)
                AuthorityKeyIdentifier(keyIdentifier: caIdentifier.keyIdentifier)
                SubjectAlternativeNames([.ipAddress(.init(contentBytes: [127, 0, 0, 1])), .dnsName("localhost")])
            },
            issuerPrivateKey: caCertificateKey)
        certificatePEM = try ca.serializeAsPEM().pemString
        presentedChainPEM = [try leaf.serializeAsPEM().pemString, certificatePEM]
        privateKeyPEM = key.pemRepresentation
        publicKeySHA256 = Data(SHA256.hash(data: key.publicKey.derRepresentation)).base64EncodedString()
    }

    init(kind: LoopbackServer.CertificateKind, now: Date = Date()) throws {
        if kind == .issuedByTestCA {
            try self.init(issuedByTestCAAt: now)
        } else {
            try self.init(selfSigned: kind, now: now)
        }
    }

    private init(selfSigned kind: LoopbackServer.CertificateKind, now: Date) throws {
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
        case .valid, .wrongHost, .issuedByTestCA:
            // An hour of slack for clocks that disagree a little.
            notBefore = now - hour
            notAfter = now + 30 * day
        case .expired:
            notBefore = now - 60 * day
            notAfter = now - 30 * day
        }

        let names: [GeneralName]
        switch kind {
        case .valid, .expired, .issuedByTestCA:
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
        presentedChainPEM = [certificatePEM]
        privateKeyPEM = key.pemRepresentation
        publicKeySHA256 = Data(SHA256.hash(data: key.publicKey.derRepresentation)).base64EncodedString()
    }
}
