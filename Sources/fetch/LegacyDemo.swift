// Demo section 7: legacy delegate code, written for FoundationNetworking's
// URLSession, running on this library because this file imports
// URLSessionCompat instead (it imports nothing else from the library).
import Foundation
import Synchronization
import URLSessionCompat

enum LegacyDemo {
    /// Fetches `url` with a classic delegate and prints the calls it got, in order.
    static func run(_ url: URL) async {
        let delegate = CallPrinter()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        session.dataTask(with: url).resume()
        session.finishTasksAndInvalidate()
        await delegate.invalidated()
    }
}

/// Prints each delegate call as it happens and counts the body.
private final class CallPrinter: NSObject, URLSessionDataDelegate, Sendable {
    private let bytes = Mutex(0)
    private let done = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let finished = Mutex(false)

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        print("  willPerformHTTPRedirection: \(response.statusCode) -> \(request.url?.path ?? "?")")
        completionHandler(request)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        print("  didReceive response: \((response as? HTTPURLResponse)?.statusCode ?? 0)")
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        bytes.withLock { $0 += data.count }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        print("  didReceive data: \(bytes.withLock { $0 }) bytes in all")
        print("  didFinishCollecting metrics: \(metrics.transactionMetrics.count) transactions")
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        print("  didCompleteWithError: \(error.map { "\($0)" } ?? "nil")")
    }

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        print("  didBecomeInvalidWithError: nil")
        finished.withLock { $0 = true }
        done.withLock { $0 }?.resume()
    }

    /// Returns once the session reported its invalidation.
    func invalidated() async {
        await withCheckedContinuation { continuation in
            let already = finished.withLock { finished in
                if !finished { done.withLock { $0 = continuation } }
                return finished
            }
            if already { continuation.resume() }
        }
    }
}
