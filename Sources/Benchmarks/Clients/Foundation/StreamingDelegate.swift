// The delegate behind bench-foundation's streaming mode: counts and discards
// each chunk, paces (W6) by blocking the delegate queue, and resumes the
// waiting Swift task when the data task completes.
import BenchClientSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

final class StreamingDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Pending {
        var continuation: CheckedContinuation<RequestOutcome, Never>
        var expectedStatus: Int
        var status = 0
        var bytes = 0
    }

    private let pending = Mutex<[Int: Pending]>([:])
    private let pacer: Mutex<Pacer>

    init(bytesPerSecond: Double) {
        pacer = Mutex(Pacer(bytesPerSecond: bytesPerSecond))
    }

    /// Starts a data task and waits for its completion.
    func run(_ request: URLRequest, in session: URLSession, expectedStatus: Int) async -> RequestOutcome {
        await withCheckedContinuation { (continuation: CheckedContinuation<RequestOutcome, Never>) in
            let task = session.dataTask(with: request)
            pending.withLock {
                $0[task.taskIdentifier] = Pending(continuation: continuation, expectedStatus: expectedStatus)
            }
            task.resume()
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        pending.withLock { $0[dataTask.taskIdentifier]?.status = status }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        pending.withLock { $0[dataTask.taskIdentifier]?.bytes += data.count }
        // Blocking the (serial) delegate queue is what a slow consumer does here.
        pacer.withLock { $0.consumeBlocking(data.count) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        let sent = Int(task.countOfBytesSent)
        if let error {
            entry.continuation.resume(returning: .failure(error))
        } else if entry.status != entry.expectedStatus {
            entry.continuation.resume(returning: .unexpectedStatus(entry.status))
        } else {
            entry.continuation.resume(returning: RequestOutcome(bytesReceived: entry.bytes, bytesSent: sent))
        }
    }
}
