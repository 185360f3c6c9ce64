import Foundation
import URLSessionCompat

/// MIGRATION.md's server-trust and client-certificate delegate: trusts a
/// server whose key is `expectedPin`, presents `p12Data` when asked.
final class TLSChallengeDelegate: NSObject, URLSessionDelegate, Sendable {
    let expectedPin: String
    let p12Data: Data

    init(expectedPin: String, p12Data: Data = Data()) {
        self.expectedPin = expectedPin
        self.p12Data = p12Data
    }

    func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        switch challenge.protectionSpace.authenticationMethod {
        case NSURLAuthenticationMethodServerTrust:
            // serverTrust is a ServerTrust (not a SecTrust): the chain as
            // TLSCertificate values, and default verification's verdict.
            guard let trust = challenge.protectionSpace.serverTrust,
                  trust.leaf?.publicKeyPin == expectedPin else {
                return completionHandler(.performDefaultHandling, nil)
            }
            completionHandler(.useCredential, URLCredential(trust: trust))
        case NSURLAuthenticationMethodClientCertificate:
            // A ClientIdentity (PEM or PKCS#12 bytes) stands for SecIdentity.
            completionHandler(.useCredential, URLCredential(identity: .pkcs12(p12Data, password: "secret")))
        default:
            completionHandler(.performDefaultHandling, nil)
        }
    }
}
