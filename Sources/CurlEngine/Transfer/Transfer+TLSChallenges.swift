internal import CCurl
internal import CTLSTrust
import Foundation

/// The TLS-challenge callbacks of a transfer (see `TLSChallengeCheck`).
extension Transfer {
    /// Whether libcurl's TLS library lets us take part in the handshake.
    static var tlsHooksAvailable: Bool { ctls_trust_available() != 0 }

    /// The options of a transfer with a `TLSChallengeCheck`.
    func configureTLSChallenges(_ challenges: TLSChallengeCheck, _ check: (CURLcode) -> Void) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        // A resumed TLS session skips the verify callback (LIBCURL-NOTES §12):
        // every new connection must be decided.
        check(easy.set(CURLOPT_SSL_SESSIONID_CACHE, 0))
        if challenges.overridesVerification {
            check(easy.set(CURLOPT_SSL_VERIFYHOST, 0))
        }
        check(ccurl_easy_setopt_ssl_ctx_function(easy.raw, transferSSLContextCallback))
        check(easy.set(CURLOPT_SSL_CTX_DATA, pointer: me))
    }

    /// Called inside the handshake: true accepts the chain.
    fileprivate func decideServerTrust(_ verification: OpaquePointer) -> Bool {
        guard let challenges = request.tlsChallenges else { return ctls_verification_error(verification) == 0 }
        _ = ctls_verification_check_host(verification, challenges.host)
        let error = Int(ctls_verification_error(verification))
        switch challenges.trust {
        case .acceptIfVerified:
            return error == 0
        case .acceptLeaf(let digest):
            if let leaf = Self.certificate(0, of: verification), Self.sha256(leaf) == digest { return true }
        case .ask:
            break
        }
        let count = Int(ctls_verification_count(verification))
        let certificates = (0..<count).compactMap { Self.certificate(Int32($0), of: verification) }
        tlsChallengeReport = .serverTrust(host: challenges.host, certificates: certificates, verifyError: error)
        return false
    }

    /// Called inside the handshake when the server asks for a client
    /// certificate and the transfer set none: true goes on without one.
    fileprivate func decideClientCertificate() -> Bool {
        guard let challenges = request.tlsChallenges, challenges.asksForClientCertificate else { return true }
        tlsChallengeReport = .clientCertificate(host: challenges.host)
        return false
    }

    private static func certificate(_ index: Int32, of verification: OpaquePointer) -> Data? {
        let length = ctls_verification_der(verification, index, nil, 0)
        guard length > 0 else { return nil }
        var der = Data(count: length)
        let written = der.withUnsafeMutableBytes { bytes in
            ctls_verification_der(verification, index, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), length)
        }
        return written == length ? der : nil
    }

    static func sha256(_ data: Data) -> Data? { digest(data, size: 32, ctls_sha256) }

    /// A digest by one of CTLSTrust's functions; nil when OpenSSL is not there.
    static func digest(
        _ data: Data, size: Int,
        _ function: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?) -> Int32
    ) -> Data? {
        var digest = Data(count: size)
        let ok = digest.withUnsafeMutableBytes { out in
            data.withUnsafeBytes { input in
                function(
                    input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count,
                    out.baseAddress?.assumingMemoryBound(to: UInt8.self))
            }
        }
        return ok != 0 ? digest : nil
    }
}

/// libcurl's CURLOPT_SSL_CTX_FUNCTION: a new connection's SSL_CTX, before
/// its handshake. Installs both callbacks with the transfer as context.
private let transferSSLContextCallback: curl_ssl_ctx_callback = { _, sslContext, userdata in
    guard let sslContext, let userdata,
        ctls_install_trust_callback(sslContext, transferTrustDecider, userdata) != 0,
        ctls_install_client_certificate_callback(sslContext, transferClientCertificateDecider, userdata) != 0
    else { return CURLE_SSL_CERTPROBLEM }
    return CURLE_OK
}

private let transferTrustDecider: ctls_trust_decider = { context, verification in
    guard let context, let verification else { return 0 }
    return Unmanaged<Transfer>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.decideServerTrust(verification) } ? 1 : 0
}

private let transferClientCertificateDecider: ctls_client_certificate_decider = { context in
    guard let context else { return 1 }
    return Unmanaged<Transfer>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.decideClientCertificate() } ? 1 : 0
}
