import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Events of download tasks, as Apple's `URLSessionDownloadDelegate`.
public protocol URLSessionDownloadDelegate: URLSessionTaskDelegate {
    /// The finished file. It exists during this call and is deleted after it
    /// returns: open or move it before returning.
    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL)

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64)

    /// A download made from resume data continues at `fileOffset` (0 when the
    /// server sent the whole body again).
    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64)
}

extension URLSessionDownloadDelegate {
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        DefaultImplementationMarker.raise()
    }

    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64
    ) {
        DefaultImplementationMarker.raise()
    }
}
