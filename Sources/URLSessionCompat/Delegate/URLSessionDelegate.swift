import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Session-wide events, as Apple's `URLSessionDelegate`. Every method is
/// optional: the defaults here stand for "not implemented" (see
/// `DefaultImplementationMarker`).
public protocol URLSessionDelegate: NSObjectProtocol, Sendable {
    /// The session was invalidated and its last task has completed. `error`
    /// is nil unless invalidation was caused by an error. The session lets go
    /// of its delegate right after this call.
    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?)

    /// Connection-level challenges (server trust, client certificate, NTLM,
    /// Negotiate) come here when implemented, else to the task-level method.
    /// Basic and Digest never come here.
    func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)

    /// The async form of the connection-level challenge method, asked when
    /// the completion-handler form is not implemented (as Apple does).
    func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?)

    /// A background session (`URLSessionConfiguration.background(withIdentifier:)`)
    /// has delivered every event of the tasks that ended while no program
    /// held its identifier: their `didFinishDownloadingTo` and
    /// `didCompleteWithError` calls came before this one.
    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession)
}

extension URLSessionDelegate {
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        DefaultImplementationMarker.raise()
    }

    public func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        DefaultImplementationMarker.raise()
        completionHandler(.performDefaultHandling, nil)
    }

    public func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        AsyncDelegateForms.raiseDefault()
        return (.performDefaultHandling, nil)
    }

    public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {}
}
