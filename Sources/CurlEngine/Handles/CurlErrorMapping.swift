internal import CCurl
import Foundation

/// Turns a failed libcurl transfer into the `URLError` URLSession users expect.
///
/// Why a table of our own: libcurl's codes are coarser (60 covers every
/// certificate problem) and finer (5/6/7 for what URLSession calls one thing) than
/// URLError's. The extra facts (OS errno, TLS verify result, whether a response
/// had started) refine the code the way the notes in LIBCURL-NOTES.md §15 describe.
package struct CurlFailure {
    var code: CURLcode
    /// CURLINFO_OS_ERRNO.
    var osErrno: Int
    /// CURLINFO_SSL_VERIFYRESULT (an OpenSSL X509_V_* value).
    var verifyResult: Int
    /// Whether a response head had been received before the failure.
    var receivedResponse: Bool
    /// Whether a connection to the server had been made.
    var connected: Bool = false
    /// libcurl's error buffer, or its generic text for the code.
    var message: String
    var url: String

    func urlError() -> URLError {
        var code = Self.urlErrorCode(
            for: code, osErrno: osErrno, verifyResult: verifyResult, receivedResponse: receivedResponse,
            connected: connected)
        var reason = "\(message) (libcurl error \(self.code.rawValue))"
        // The server's TLS alert about our certificate: OpenSSL reports it
        // as a read or handshake error (56, 35), named only in its text.
        if let clientProblem = Self.clientCertificateProblem(code: self.code, message: message) {
            code = clientProblem.code
            reason = "\(clientProblem.reason) (\(reason))"
        }
        if self.code == CURLE_PEER_FAILED_VERIFICATION {
            reason = "\(Self.certificateProblem(verifyResult: verifyResult)) (\(reason))"
        } else if self.code == CURLE_SSL_PINNEDPUBKEYNOTMATCH {
            let host = URL(string: url)?.host ?? "the server"
            reason = "The public key of \(host)'s certificate matches none of the configuration's "
                + "pinnedPublicKeys for it: if the server's key changed on purpose, pin the new key's "
                + "SHA-256 (\(reason))"
        }
        return URLError.make(code, url: url, reason: reason)
    }

    static func urlErrorCode(
        for code: CURLcode, osErrno: Int, verifyResult: Int, receivedResponse: Bool, connected: Bool = false
    ) -> URLError.Code {
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL:
            // After a connection, this is libcurl refusing an HTTP/0.9 reply
            // (bytes that are not an HTTP response); before, a scheme it lacks.
            return connected ? .badServerResponse : .unsupportedURL
        case CURLE_URL_MALFORMAT:
            return .badURL
        case CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_RESOLVE_HOST:
            return .cannotFindHost
        case CURLE_COULDNT_CONNECT:
            return osErrno == Int(ETIMEDOUT) ? .timedOut : .cannotConnectToHost
        case CURLE_WEIRD_SERVER_REPLY:
            return .badServerResponse
        case CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return receivedResponse ? .networkConnectionLost : .badServerResponse
        case CURLE_GOT_NOTHING:
            // The server closed without a byte of response: URLSession's
            // "network connection was lost" on Apple platforms.
            return .networkConnectionLost
        case CURLE_PARTIAL_FILE, CURLE_SEND_ERROR, CURLE_RECV_ERROR:
            return .networkConnectionLost
        case CURLE_WRITE_ERROR:
            return .unknown
        case CURLE_READ_ERROR, CURLE_SEND_FAIL_REWIND:
            return .requestBodyStreamExhausted
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_ENGINE_INITFAILED,
            CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_USE_SSL_FAILED:
            return .secureConnectionFailed
        case CURLE_SSL_CACERT_BADFILE:
            return .secureConnectionFailed
        case CURLE_PEER_FAILED_VERIFICATION:
            return certificateErrorCode(verifyResult: verifyResult)
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .serverCertificateUntrusted
        case CURLE_SSL_CLIENTCERT:
            return .clientCertificateRequired
        case CURLE_ABORTED_BY_CALLBACK:
            return .cancelled
        case CURLE_TOO_MANY_REDIRECTS:
            return .httpTooManyRedirects
        case CURLE_BAD_CONTENT_ENCODING:
            return .cannotDecodeContentData
        case CURLE_FILESIZE_EXCEEDED:
            return .dataLengthExceedsMaximum
        case CURLE_PROXY:
            return .cannotConnectToHost
        case CURLE_OUT_OF_MEMORY:
            return .cannotLoadFromNetwork
        case CURLE_RANGE_ERROR, CURLE_BAD_DOWNLOAD_RESUME:
            return .cannotParseResponse
        case CURLE_LOGIN_DENIED, CURLE_AUTH_ERROR:
            return .userAuthenticationRequired
        case CURLE_REMOTE_ACCESS_DENIED:
            return .noPermissionsToReadFile
        case CURLE_INTERFACE_FAILED:
            // The local side (CURLOPT_INTERFACE) could not be bound: no
            // connection can be made from there.
            return .cannotConnectToHost
        default:
            return .unknown
        }
    }

    /// A TLS alert by which the server asked for a client certificate
    /// (TLS 1.3 `certificate_required`, or libcurl's 98) or refused the
    /// one it got (`bad_certificate`, `unknown_ca`, ...), with what to do.
    static func clientCertificateProblem(code: CURLcode, message: String) -> (code: URLError.Code, reason: String)? {
        let lowercased = message.lowercased()
        if code == CURLE_SSL_CLIENTCERT || lowercased.contains("alert certificate required") {
            return (.clientCertificateRequired,
                "The server requires a client certificate: set the configuration's clientIdentity")
        }
        let refusals = ["alert bad certificate", "alert unknown ca", "alert certificate unknown",
                        "alert unsupported certificate", "alert certificate revoked", "alert certificate expired"]
        guard code == CURLE_RECV_ERROR || code == CURLE_SSL_CONNECT_ERROR || code == CURLE_SEND_ERROR,
            refusals.contains(where: lowercased.contains)
        else { return nil }
        return (.clientCertificateRejected,
            "The server refused the client certificate: send one it trusts (check the identity's issuer and dates)")
    }

    /// Apple's code for each certificate failure, from OpenSSL's
    /// X509_V_ERR_* value (x509_vfy.h): 9 not yet valid (-1204), 10 expired
    /// (-1201), 18 a self-signed leaf nobody trusts (untrusted, -1202, as
    /// Apple reports a self-signed server), 2, 19, 20 and 21 a chain whose
    /// root is not trusted (unknown root, -1203); the rest (a host that does
    /// not match, a bad signature, ...) untrusted.
    package static func certificateErrorCode(verifyResult: Int) -> URLError.Code {
        switch verifyResult {
        case 9: return .serverCertificateNotYetValid
        case 10: return .serverCertificateHasBadDate
        case 18: return .serverCertificateUntrusted
        case 2, 19, 20, 21: return .serverCertificateHasUnknownRoot
        default: return .serverCertificateUntrusted
        }
    }

    /// What went wrong with the server's certificate, and what to do, in
    /// words (libcurl's message follows it in the error).
    package static func certificateProblem(verifyResult: Int) -> String {
        let trustHint = "trust its root with the configuration's tlsTrustRootsPEM, or fix the server's certificate"
        switch verifyResult {
        case 9: return "The server's certificate is not yet valid: check the server's and this machine's clocks"
        case 10: return "The server's certificate has expired: renew it on the server"
        case 18: return "The server's certificate is self-signed and not trusted: \(trustHint)"
        case 19: return "The server's certificate chain ends in a self-signed root that is not trusted: \(trustHint)"
        case 2, 20, 21: return "The server's certificate was issued by an unknown root: \(trustHint)"
        default:
            return "The server's certificate is not valid for this server (the host does not match, or it is "
                + "otherwise untrusted): connect by a name the certificate lists, or fix the certificate"
        }
    }
}

extension URLError {
    /// `NSURLErrorFailingURLStringErrorKey`'s value, spelled out: the
    /// constant is deprecated in swift-corelibs-foundation, but Apple sets
    /// the key on every task error and `failureURLString` reads it.
    package static let failingURLStringKey = "NSErrorFailingURLStringKey"

    /// A URLError that names the URL and says what went wrong.
    package static func make(_ code: URLError.Code, url: String?, reason: String) -> URLError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: reason]
        if let url, let parsed = URL(string: url) {
            info[NSURLErrorFailingURLErrorKey] = parsed
            info[failingURLStringKey] = url
        }
        return URLError(code, userInfo: info)
    }

    /// This error with the failing URL under both of Apple's keys
    /// (`NSErrorFailingURLKey` and `NSErrorFailingURLStringKey`), keeping
    /// any the error already names.
    package func namingFailingURL(_ url: URL?) -> URLError {
        var info = userInfo
        let failing = info[NSURLErrorFailingURLErrorKey] as? URL ?? url
        guard let failing else { return self }
        let hasURL = info[NSURLErrorFailingURLErrorKey] != nil
        let hasString = info[Self.failingURLStringKey] != nil
        guard !hasURL || !hasString else { return self }
        info[NSURLErrorFailingURLErrorKey] = failing
        if !hasString { info[Self.failingURLStringKey] = failing.absoluteString }
        return URLError(code, userInfo: info)
    }
}
