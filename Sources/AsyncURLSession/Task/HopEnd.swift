internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a hop's transfer ended, kept while response handlers still decide.
enum HopEnd: Sendable {
    case success
    case failure(URLError)
    /// The handshake stopped for a TLS-challenge decision (nothing was sent).
    case tlsChallenge(TLSChallengeReport)
    /// The proxy answered CONNECT with 407, offering these methods.
    case proxyRefusedConnect([String], URLError)
}
