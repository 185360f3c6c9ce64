import CCurl
import Foundation
import Testing

@testable import CurlEngine

/// The CURLcode -> URLError.Code table, row by row. Rows that a loopback
/// server can provoke are also covered end to end in AsyncURLSessionTests.
@Suite struct CurlErrorMappingTests {
    private func code(_ curl: CURLcode, errno: Int = 0, verify: Int = 0, response: Bool = false) -> URLError.Code {
        CurlFailure.urlErrorCode(for: curl, osErrno: errno, verifyResult: verify, receivedResponse: response)
    }

    @Test func table() {
        #expect(code(CURLE_UNSUPPORTED_PROTOCOL) == .unsupportedURL)
        #expect(CurlFailure.urlErrorCode(
            for: CURLE_UNSUPPORTED_PROTOCOL, osErrno: 0, verifyResult: 0, receivedResponse: false, connected: true)
            == .badServerResponse, "an HTTP/0.9 reply is a bad server response")
        #expect(code(CURLE_URL_MALFORMAT) == .badURL)
        #expect(code(CURLE_COULDNT_RESOLVE_HOST) == .cannotFindHost)
        #expect(code(CURLE_COULDNT_RESOLVE_PROXY) == .cannotFindHost)
        #expect(code(CURLE_COULDNT_CONNECT) == .cannotConnectToHost)
        #expect(code(CURLE_COULDNT_CONNECT, errno: Int(ETIMEDOUT)) == .timedOut)
        #expect(code(CURLE_WEIRD_SERVER_REPLY) == .badServerResponse)
        #expect(code(CURLE_HTTP2) == .badServerResponse)
        #expect(code(CURLE_HTTP2_STREAM, response: true) == .networkConnectionLost)
        #expect(code(CURLE_GOT_NOTHING) == .networkConnectionLost)
        #expect(code(CURLE_PARTIAL_FILE) == .networkConnectionLost)
        #expect(code(CURLE_RECV_ERROR) == .networkConnectionLost)
        #expect(code(CURLE_SEND_ERROR) == .networkConnectionLost)
        #expect(code(CURLE_OPERATION_TIMEDOUT) == .timedOut)
        #expect(code(CURLE_SSL_CONNECT_ERROR) == .secureConnectionFailed)
        #expect(code(CURLE_SSL_CERTPROBLEM) == .secureConnectionFailed)
        #expect(code(CURLE_PEER_FAILED_VERIFICATION, verify: 10) == .serverCertificateHasBadDate)
        #expect(code(CURLE_PEER_FAILED_VERIFICATION, verify: 9) == .serverCertificateNotYetValid)
        #expect(code(CURLE_PEER_FAILED_VERIFICATION, verify: 18) == .serverCertificateUntrusted, "self-signed, as Apple")
        #expect(code(CURLE_PEER_FAILED_VERIFICATION, verify: 19) == .serverCertificateHasUnknownRoot)
        #expect(code(CURLE_PEER_FAILED_VERIFICATION, verify: 20) == .serverCertificateHasUnknownRoot)
        #expect(code(CURLE_PEER_FAILED_VERIFICATION, verify: 21) == .serverCertificateHasUnknownRoot)
        #expect(code(CURLE_PEER_FAILED_VERIFICATION, verify: 2) == .serverCertificateHasUnknownRoot)
        #expect(code(CURLE_PEER_FAILED_VERIFICATION, verify: 1) == .serverCertificateUntrusted)
        #expect(code(CURLE_SSL_PINNEDPUBKEYNOTMATCH) == .serverCertificateUntrusted)
        #expect(code(CURLE_SSL_CLIENTCERT) == .clientCertificateRequired)
        #expect(code(CURLE_ABORTED_BY_CALLBACK) == .cancelled)
        #expect(code(CURLE_TOO_MANY_REDIRECTS) == .httpTooManyRedirects)
        #expect(code(CURLE_BAD_CONTENT_ENCODING) == .cannotDecodeContentData)
        #expect(code(CURLE_FILESIZE_EXCEEDED) == .dataLengthExceedsMaximum)
        #expect(code(CURLE_SEND_FAIL_REWIND) == .requestBodyStreamExhausted)
        #expect(code(CURLE_PROXY) == .cannotConnectToHost)
    }

    @Test func certificateFailure_saysWhichProblemAndWhatToDo() {
        let failure = CurlFailure(
            code: CURLE_PEER_FAILED_VERIFICATION, osErrno: 0, verifyResult: 20, receivedResponse: false,
            message: "SSL certificate problem: unable to get local issuer certificate", url: "https://127.0.0.1:1/")
        let text = failure.urlError().localizedDescription
        #expect(text.contains("unknown root") && text.contains("tlsTrustRootsPEM"))
        #expect(text.contains("libcurl error 60"))
    }

    @Test func urlError_namesTheURLAndLibcurlsMessage() {
        let failure = CurlFailure(
            code: CURLE_COULDNT_CONNECT, osErrno: 111, verifyResult: 0, receivedResponse: false,
            message: "Failed to connect", url: "http://127.0.0.1:1/")
        let error = failure.urlError()
        #expect(error.code == .cannotConnectToHost)
        #expect(error.failingURL == URL(string: "http://127.0.0.1:1/"))
        #expect(error.localizedDescription.contains("Failed to connect"))
        #expect(error.localizedDescription.contains("libcurl error 7"))
    }

    @Test func serversAlertAboutTheClientCertificate_namesTheProblem() {
        func error(_ code: CURLcode, _ message: String) -> URLError {
            CurlFailure(code: code, osErrno: 0, verifyResult: 0, receivedResponse: false, message: message,
                        url: "https://127.0.0.1:1/").urlError()
        }
        let required = error(
            CURLE_RECV_ERROR, "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required")
        #expect(required.code == .clientCertificateRequired)
        #expect(required.localizedDescription.contains("clientIdentity"))
        #expect(error(CURLE_SSL_CLIENTCERT, "client certificate required").code == .clientCertificateRequired)
        #expect(error(CURLE_SSL_CONNECT_ERROR, "error:0A000418:SSL routines::tlsv1 alert unknown ca").code
            == .clientCertificateRejected)
        #expect(error(CURLE_RECV_ERROR, "Connection reset by peer").code == .networkConnectionLost)
    }
}
