import Foundation
import URLSessionCompat

/// The classic side of MIGRATION.md's step 2, as it runs on URLSessionCompat.
enum ClassicCalls {
    static func fetchStatus(of url: URL, completion: @escaping @Sendable (Int?) -> Void) {
        URLSession.shared.dataTask(with: url) { _, response, _ in
            completion((response as? HTTPURLResponse)?.statusCode)
        }.resume()
    }
}

final class ProgressDownloader: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: `fractions` is only touched on the session's serial
    // delegate queue; the rest is immutable.
    private(set) var fractions: [Double] = []
    private let destination: URL
    private let done: @Sendable ((any Error)?) -> Void

    init(destination: URL, done: @escaping @Sendable ((any Error)?) -> Void) {
        self.destination = destination
        self.done = done
    }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        if totalBytesExpectedToWrite > 0 {
            fractions.append(Double(totalBytesWritten) / Double(totalBytesExpectedToWrite))
        }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        try? FileManager.default.moveItem(at: location, to: destination)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        done(error)
    }
}

final class SameHostRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(request.url?.host == task.originalRequest?.url?.host ? request : nil)
    }
}

final class PasswordProvider: NSObject, URLSessionTaskDelegate, Sendable {
    let user: String
    let password: String

    init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard challenge.previousFailureCount == 0 else {
            return completionHandler(.cancelAuthenticationChallenge, nil)
        }
        completionHandler(.useCredential, URLCredential(user: user, password: password, persistence: .forSession))
    }
}
