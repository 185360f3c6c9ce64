import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What a classic stream task's properties read: the core's `StreamTask`
/// keeps no task state of URLSessionTask's kind, so it is kept here.
final class StreamTaskModel: ConnectionTaskModel {
    let stream: StreamTask
    let progress = Progress(totalUnitCount: -1)
    let lifecycle = ConnectionTaskLifecycleRecord()

    private struct Guarded {
        var error: URLError?
        var bytesSent: Int64 = 0
        var bytesReceived: Int64 = 0
    }

    private let guarded = Mutex(Guarded())

    init(stream: StreamTask) {
        self.stream = stream
    }

    var originalRequest: URLRequest? { nil }
    var currentRequest: URLRequest? { nil }
    var response: URLResponse? { nil }
    var error: (any Error)? { guarded.withLock { $0.error } }
    var countOfBytesReceived: Int64 { guarded.withLock { $0.bytesReceived } }
    var countOfBytesSent: Int64 { guarded.withLock { $0.bytesSent } }
    var classicState: URLSessionTask.State { lifecycle.read { $0.classicState() } }

    func noteRead(_ count: Int) { guarded.withLock { $0.bytesReceived += Int64(count) } }
    func noteWritten(_ count: Int) { guarded.withLock { $0.bytesSent += Int64(count) } }

    func markEnded(_ error: URLError?) {
        guarded.withLock { $0.error = error }
        lifecycle.change { $0.ended = true }
    }
}
