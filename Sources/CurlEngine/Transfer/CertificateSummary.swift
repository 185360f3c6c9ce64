internal import CTLSTrust
import Foundation

/// What a certificate says, read from its DER by the OpenSSL libcurl loaded
/// (see CTLSTrust.h). Made off the engine thread, when a task offers a
/// server-trust challenge.
package struct CertificateSummary: Sendable {
    package var subject: String
    package var issuer: String
    package var notValidBefore: Date
    package var notValidAfter: Date
    package var sha256: Data
    package var publicKeySHA256: Data
    /// "DNS:name" and "IP:address" entries.
    package var alternativeNames: [String]

    /// Nil when the DER does not parse (or OpenSSL is not there).
    package init?(der: Data) {
        var summary = ctls_certificate_summary()
        let ok = der.withUnsafeBytes { bytes in
            ctls_certificate_summarize(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &summary)
        }
        guard ok != 0 else { return nil }
        subject = Self.string(&summary.subject)
        issuer = Self.string(&summary.issuer)
        notValidBefore = Date(timeIntervalSince1970: TimeInterval(summary.not_before))
        notValidAfter = Date(timeIntervalSince1970: TimeInterval(summary.not_after))
        sha256 = withUnsafeBytes(of: &summary.sha256) { Data($0) }
        publicKeySHA256 = withUnsafeBytes(of: &summary.public_key_sha256) { Data($0) }
        alternativeNames = Self.string(&summary.alternative_names)
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// SHA-256 of `data`, nil when OpenSSL is not there.
    package static func sha256(_ data: Data) -> Data? { Transfer.sha256(data) }

    /// SHA-1 of `data` (for the WebSocket handshake only), nil when OpenSSL is not there.
    package static func sha1(_ data: Data) -> Data? { Transfer.digest(data, size: 20, ctls_sha1) }

    /// OpenSSL's words for a verification result.
    package static func verifyErrorText(_ code: Int) -> String {
        String(cString: ctls_verify_error_string(code))
    }

    private static func string<T>(_ tuple: inout T) -> String {
        withUnsafeBytes(of: &tuple) { bytes in
            let end = bytes.firstIndex(of: 0) ?? bytes.count
            return String(decoding: bytes[..<end], as: UTF8.self)
        }
    }
}
