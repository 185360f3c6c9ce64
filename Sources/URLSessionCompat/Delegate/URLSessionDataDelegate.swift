import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Events of data and upload tasks, as Apple's `URLSessionDataDelegate`.
public protocol URLSessionDataDelegate: URLSessionTaskDelegate {
    /// The response head. `.allow` goes on, `.cancel` ends the task with
    /// `URLError(.cancelled)`, `.becomeDownload` turns it into a download
    /// task (`didBecome downloadTask`, then download calls on that task).
    /// Not implemented: allow.
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void)

    /// The async form, asked when the completion-handler form is not
    /// implemented (as Apple does).
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse
    ) async -> URLSession.ResponseDisposition

    /// The data task became `downloadTask`; no further calls name the data task.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask)

    /// The next piece of the body; the pieces concatenate to the body.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data)

    /// Asked before a cacheable response is stored in the session's
    /// `urlCache`, after its body and before completion: answer with it,
    /// a changed one, or nil to store nothing. Not asked for responses the
    /// cache served, nor for tasks with a completion handler.
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void)

    /// The async form, asked when the completion-handler form is not implemented.
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse
    ) async -> CachedURLResponse?
}

extension URLSessionDataDelegate {
    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        DefaultImplementationMarker.raise()
        completionHandler(.allow)
    }

    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse
    ) async -> URLSession.ResponseDisposition {
        AsyncDelegateForms.raiseDefault()
        return .allow
    }

    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask
    ) {
        DefaultImplementationMarker.raise()
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        DefaultImplementationMarker.raise()
    }

    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        DefaultImplementationMarker.raise()
        completionHandler(proposedResponse)
    }

    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse
    ) async -> CachedURLResponse? {
        AsyncDelegateForms.raiseDefault()
        return proposedResponse
    }
}
