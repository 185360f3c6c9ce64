internal import CurlEngine
import Foundation

/// The server side of a new TLS connection, offered with a server-trust
/// challenge (`ChallengeDecision.serverTrust`,
/// `URLProtectionSpace.serverTrust`): Linux's stand-in for Apple's
/// `SecTrust`. It holds the chain the server sent and the verdict default
/// verification reached (the system roots or `tlsTrustRootsPEM`, the dates,
/// the host name).
///
/// To trust it, answer `useCredential(URLCredential(trust: trust))`; that
/// credential trusts this chain (its leaf) for this host only.
public final class ServerTrust: Sendable, CustomStringConvertible {
    public let host: String
    public let port: Int
    /// As the server sent them, leaf first.
    public let certificates: [TLSCertificate]
    /// OpenSSL's verification result (`X509_V_OK`, 0, when trusted): 10
    /// expired, 18 self-signed, 20 unknown issuer, 62 wrong host, ...
    public let verificationResult: Int
    /// What default verification found wrong, and what to do; nil when it
    /// trusts the chain. Default handling fails the task with this error.
    public let verificationError: URLError?

    /// Whether default handling would accept the connection.
    public var isTrustedByDefault: Bool { verificationError == nil }

    /// The server's own certificate.
    public var leaf: TLSCertificate? { certificates.first }

    init(host: String, port: Int, certificates: [TLSCertificate], verificationResult: Int, url: String?) {
        self.host = host
        self.port = port
        self.certificates = certificates
        self.verificationResult = verificationResult
        verificationError = verificationResult == 0
            ? nil
            : URLError.make(
                CurlFailure.certificateErrorCode(verifyResult: verificationResult), url: url,
                reason: Self.problem(verificationResult, host: host, certificates: certificates))
    }

    /// The problem in words, naming the certificate's names and issuer.
    private static func problem(_ result: Int, host: String, certificates: [TLSCertificate]) -> String {
        let openSSL = CertificateSummary.verifyErrorText(result)
        guard let leaf = certificates.first else {
            return "\(CurlFailure.certificateProblem(verifyResult: result)) (\(openSSL))"
        }
        switch result {
        case 62, 64:
            let names = leaf.subjectAlternativeNames.isEmpty
                ? "no subject alternative names" : leaf.subjectAlternativeNames.joined(separator: ", ")
            return "The server's certificate is not valid for \(host) (the host does not match: it lists \(names)). "
                + "Connect by a name the certificate lists, or fix the certificate (\(openSSL))"
        case 2, 19, 20, 21:
            let top = certificates.last ?? leaf
            return "The server's certificate chain ends at '\(top.issuer)', a root this session does not trust: "
                + "add that root to the configuration's tlsTrustRootsPEM, or fix the server's chain (\(openSSL))"
        default:
            return "\(CurlFailure.certificateProblem(verifyResult: result)) (certificate '\(leaf.subject)', "
                + "issued by '\(leaf.issuer)'; \(openSSL))"
        }
    }

    public var description: String {
        let verdict = verificationError.map { "untrusted: \($0.localizedDescription)" } ?? "trusted by default"
        return "ServerTrust(\(host):\(port), \(certificates.count) certificate(s), \(verdict))"
    }
}
