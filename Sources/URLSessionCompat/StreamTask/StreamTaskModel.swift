import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What a classic stream task's properties read: the core's `StreamTask`
/// keeps no task state of URLSessionTask's kind, so it is kept here.
final class StreamTaskModel: ClassicTaskModel {
    let stream: StreamTask
    let progress = Progress(totalUnitCount: -1)

    private struct Guarded {
        var resumed = false
        var cancelRequested = false
        var ended = false
        var error: URLError?
        var bytesSent: Int64 = 0
        var bytesReceived: Int64 = 0
        var priority: Float = 0.5
        var taskDescription: String?
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
    var countOfBytesExpectedToSend: Int64 { 0 }
    var countOfBytesExpectedToReceive: Int64 { -1 }

    var classicState: URLSessionTask.State {
        guarded.withLock { guarded in
            if guarded.ended { return .completed }
            if guarded.cancelRequested { return .canceling }
            return guarded.resumed ? .running : .suspended
        }
    }

    var priority: Float {
        get { guarded.withLock { $0.priority } }
        set { guarded.withLock { $0.priority = newValue } }
    }

    var taskDescription: String? {
        get { guarded.withLock { $0.taskDescription } }
        set { guarded.withLock { $0.taskDescription = newValue } }
    }

    func markResumed() { guarded.withLock { $0.resumed = true } }
    func markCancelRequested() { guarded.withLock { $0.cancelRequested = true } }
    func noteRead(_ count: Int) { guarded.withLock { $0.bytesReceived += Int64(count) } }
    func noteWritten(_ count: Int) { guarded.withLock { $0.bytesSent += Int64(count) } }

    func markEnded(_ error: URLError?) {
        guarded.withLock { guarded in
            guarded.ended = true
            guarded.error = error
        }
    }
}
