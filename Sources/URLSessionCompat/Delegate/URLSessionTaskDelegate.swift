import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Events of one task, as Apple's `URLSessionTaskDelegate`. Every method is
/// optional. A task's own `delegate` is asked first; what it does not
/// implement goes to the session's delegate.
public protocol URLSessionTaskDelegate: URLSessionDelegate {
    /// A task was made by the session (any factory, the async calls
    /// included): once per task, on the delegate queue, before any other
    /// call for it. Only the session's delegate hears it (a task's own
    /// delegate is set after creation).
    func urlSession(_ session: URLSession, didCreateTask task: URLSessionTask)

    /// A 3xx with a Location. Answer the proposed request to follow it,
    /// another request to follow that, or nil to make the redirect response
    /// (and its body) the task's result. Not implemented: redirects are
    /// followed (https to http only when the configuration allows it).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void)

    /// Every challenge of the task (Basic, Digest, and connection-level ones
    /// the session delegate does not take). Not implemented: credentials from
    /// the configuration's credential storage or the URL are used, else the
    /// 401/407 response is the result.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)

    /// The task needs its body stream: the first one of a streamed upload, or
    /// a new one when the request is sent again. Nil fails the task.
    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void)

    /// The async forms of the three methods above, asked when their
    /// completion-handler form is not implemented (as Apple does): code
    /// written for Apple's platforms often implements only these.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest) async -> URLRequest?

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?)

    func urlSession(_ session: URLSession, needNewBodyStreamForTask task: URLSessionTask) async -> InputStream?

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64)

    /// An informational (1xx) response other than 101, such as 103 Early
    /// Hints; the final response follows as usual.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceiveInformationalResponse response: HTTPURLResponse)

    /// The task cannot connect and waits for connectivity
    /// (`waitsForConnectivity`): once per task, before its first retry.
    func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask)

    /// Once per task, after every other call for it.
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)

    /// Just before `didCompleteWithError`.
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics)
}

extension URLSessionTaskDelegate {
    public func urlSession(_ session: URLSession, didCreateTask task: URLSessionTask) {
        DefaultImplementationMarker.raise()
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        DefaultImplementationMarker.raise()
        completionHandler(request)
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        DefaultImplementationMarker.raise()
        completionHandler(.performDefaultHandling, nil)
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        DefaultImplementationMarker.raise()
        completionHandler(nil)
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest
    ) async -> URLRequest? {
        AsyncDelegateForms.raiseDefault()
        return request
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        AsyncDelegateForms.raiseDefault()
        return (.performDefaultHandling, nil)
    }

    public func urlSession(_ session: URLSession, needNewBodyStreamForTask task: URLSessionTask) async -> InputStream? {
        AsyncDelegateForms.raiseDefault()
        return nil
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        DefaultImplementationMarker.raise()
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceiveInformationalResponse response: HTTPURLResponse
    ) {
        DefaultImplementationMarker.raise()
    }

    public func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
        DefaultImplementationMarker.raise()
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        DefaultImplementationMarker.raise()
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics
    ) {
        DefaultImplementationMarker.raise()
    }
}
