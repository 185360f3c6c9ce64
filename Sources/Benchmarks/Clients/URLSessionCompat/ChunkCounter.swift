// The per-task delegate of bench-urlsessioncompat's streaming mode: counts and
// discards each chunk, paces (W6) by blocking the delegate queue, and reports
// the outcome once the task completes.
import BenchClientSupport
import Synchronization
import URLSessionCompat

final class ChunkCounter: NSObject, URLSessionDataDelegate, Sendable {
    private let expectedStatus: Int
    private let pacer: SharedPacer
    private let finish: @Sendable (RequestOutcome) -> Void
    private let counted = Mutex<(status: Int, bytes: Int)>((0, 0))

    init(expectedStatus: Int, pacer: SharedPacer, finish: @escaping @Sendable (RequestOutcome) -> Void) {
        self.expectedStatus = expectedStatus
        self.pacer = pacer
        self.finish = finish
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        counted.withLock { $0.status = (response as? HTTPURLResponse)?.statusCode ?? 0 }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        counted.withLock { $0.bytes += data.count }
        pacer.state.withLock { $0.consumeBlocking(data.count) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (status, bytes) = counted.withLock { $0 }
        if let error {
            finish(.failure(error))
        } else if status != expectedStatus {
            finish(.unexpectedStatus(status))
        } else {
            finish(RequestOutcome(bytesReceived: bytes, bytesSent: Int(task.countOfBytesSent)))
        }
    }
}

/// One pace for every transfer of the run (W6 has one), shared by reference.
final class SharedPacer: Sendable {
    let state: Mutex<Pacer>
    init(bytesPerSecond: Double) { state = Mutex(Pacer(bytesPerSecond: bytesPerSecond)) }
}
