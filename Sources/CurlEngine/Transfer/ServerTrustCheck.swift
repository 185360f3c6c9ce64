import Foundation

/// How an https transfer treats the server's certificate chain when its task
/// offers server-trust challenges: a verification callback runs in each new
/// connection's handshake (CURLOPT_SSL_CTX_FUNCTION) and decides at once.
///
/// Why a refused handshake and a retry, not a wait: the callback runs inside
/// the handshake on the engine thread and must answer synchronously, and
/// libcurl 7.88.1 does not resume a handshake OpenSSL suspended for a later
/// verdict (`SSL_set_retry_verify` ends it with error 35). So the first
/// handshake records the chain and refuses; the task asks its handler; the
/// answer goes into the next hop's check (`acceptLeaf`, `acceptIfVerified`).
/// A reused connection runs no handshake and is not asked again, as on
/// Apple's platforms, where trust is evaluated per new connection.
package final class ServerTrustCheck: Sendable {
    package enum Mode: Sendable, Equatable {
        /// Refuse the handshake and report the chain, so the task can ask.
        case ask
        /// Accept the chain whose leaf has this SHA-256 (an answer trusted
        /// it); refuse and report any other.
        case acceptLeaf(Data)
        /// Accept what default verification accepts; refuse the rest
        /// without a report (default handling was the answer).
        case acceptIfVerified
    }

    /// The name the certificate must carry (IPv6 literals without brackets).
    package let host: String
    package let mode: Mode
    /// The connection is trusted by an answer, not by verification:
    /// libcurl's own host check is off (the callback's decision stands), and
    /// the transfer's `pinnedPublicKey` keeps such connections apart from
    /// verified ones in libcurl's connection reuse.
    package let overridesVerification: Bool

    package init(host: String, mode: Mode, overridesVerification: Bool) {
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.mode = mode
        self.overridesVerification = overridesVerification
    }
}

/// A handshake refused for a server-trust decision: the chain as the server
/// sent it (DER, leaf first) and what default verification said of it.
package struct ServerTrustReport: Sendable {
    package var host: String
    package var certificates: [Data]
    /// OpenSSL's verification result for chain and host; 0 when trusted.
    package var verifyError: Int

    package init(host: String, certificates: [Data], verifyError: Int) {
        self.host = host
        self.certificates = certificates
        self.verifyError = verifyError
    }
}
