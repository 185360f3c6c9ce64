import Foundation

/// How an https transfer takes part in its TLS handshake when its task
/// offers TLS challenges (server trust, client certificates): callbacks run
/// in each new connection's handshake (CURLOPT_SSL_CTX_FUNCTION) and decide
/// at once.
///
/// Why a stopped handshake and a retry, not a wait: the callbacks run inside
/// the handshake on the engine thread and must answer synchronously, and
/// libcurl 7.88.1 does not resume a handshake OpenSSL suspended for a later
/// verdict (`SSL_set_retry_verify` and a client-certificate callback's -1
/// both end it with error 35). So the first handshake records what is asked
/// and stops before the request is sent; the task asks its handler; the
/// answer goes into the next attempt (`trust`, `clientCertificate`). A
/// reused connection runs no handshake and is not asked again, as on
/// Apple's platforms, where these challenges come per new connection.
package final class TLSChallengeCheck: Sendable {
    package enum TrustMode: Sendable, Equatable {
        /// Stop the handshake and report the chain, so the task can ask.
        case ask
        /// Accept the chain whose leaf has this SHA-256 (an answer trusted
        /// it); stop and report any other.
        case acceptLeaf(Data)
        /// Accept what default verification accepts; fail the rest without
        /// a report (default handling was the answer).
        case acceptIfVerified
    }

    /// The name the certificate must carry (IPv6 literals without brackets).
    package let host: String
    package let trust: TrustMode
    /// The connection is trusted by an answer, not by verification:
    /// libcurl's own host check is off (the callback's decision stands), and
    /// the transfer's `pinnedPublicKey` keeps such connections apart from
    /// verified ones in libcurl's connection reuse.
    package let overridesVerification: Bool
    /// Stop the handshake when the server asks for a client certificate and
    /// the transfer has none, so the task can ask for one. False: go on
    /// without one.
    package let asksForClientCertificate: Bool

    package init(host: String, trust: TrustMode, overridesVerification: Bool, asksForClientCertificate: Bool) {
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.trust = trust
        self.overridesVerification = overridesVerification
        self.asksForClientCertificate = asksForClientCertificate
    }
}

/// What stopped a handshake for the task to decide. Indirect: every
/// transfer holds one optional, almost always nil, at a pointer's size.
package indirect enum TLSChallengeReport: Sendable {
    /// The chain as the server sent it (DER, leaf first) and what default
    /// verification said of it (OpenSSL's result; 0 when trusted).
    case serverTrust(host: String, certificates: [Data], verifyError: Int)
    /// The server asked for a client certificate.
    case clientCertificate(host: String)
}
