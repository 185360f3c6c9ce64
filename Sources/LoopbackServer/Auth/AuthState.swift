import Crypto
import Foundation
import Synchronization

/// Per-server authentication state, shared by all connections and streams of one server
/// (hence Sendable): the Digest nonce key and opaque value, and the count of requests to /auth
/// routes that carried an Authorization header.
///
/// Nonces are checked without a table: each is a random part plus an HMAC of it under a key
/// made at server start. So any nonce this server ever issued stays valid for its lifetime,
/// memory does not grow with the number of challenges, and a nonce from another server (or
/// made up by a client) is refused.
final class AuthState: Sendable {
    /// Same for every challenge of this server; clients must send it back unchanged.
    let opaque: String

    private let nonceKey = SymmetricKey(size: .bits256)
    private let attempts = Atomic<Int>(0)

    init() {
        opaque = Hex.string(SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) })
    }

    /// Requests to /auth routes that carried an Authorization header so far.
    var authorizationAttempts: Int {
        attempts.load(ordering: .relaxed)
    }

    func countAuthorizationAttempt() {
        attempts.add(1, ordering: .relaxed)
    }

    /// A fresh nonce: 32 hex digits of randomness, then 32 of their HMAC.
    func makeNonce() -> String {
        let random = SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) }
        return Hex.string(random) + Hex.string(tag(random))
    }

    /// Whether `nonce` was made by `makeNonce()` of this server.
    func isValidNonce(_ nonce: String) -> Bool {
        guard let bytes = Hex.bytes(nonce), bytes.count == 32 else { return false }
        return Array(bytes[16...]) == tag(Array(bytes[..<16]))
    }

    /// HMAC-SHA256 of `random`, cut to 16 bytes (plenty for a test server's nonces).
    private func tag(_ random: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: random, using: nonceKey).prefix(16))
    }
}
