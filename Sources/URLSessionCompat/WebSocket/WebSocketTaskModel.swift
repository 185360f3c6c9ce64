import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What a classic WebSocket task's properties read, and the record of which
/// of its delegate calls were made: the core's `WebSocketTask` has no
/// task state of URLSessionTask's kind, so it is kept here.
final class WebSocketTaskModel: ClassicTaskModel {
    let socket: WebSocketTask
    let progress = Progress(totalUnitCount: -1)

    private struct Guarded {
        var resumed = false
        var cancelRequested = false
        var ended = false
        var openDelivered = false
        /// The server dropped the connection after opening without a close
        /// frame: reported as `.normalClosure` with no reason, as
        /// FoundationNetworking does (the core says `.abnormalClosure`).
        var droppedAfterOpening = false
        var priority: Float = 0.5
        var taskDescription: String?
    }

    private let guarded = Mutex(Guarded())

    init(socket: WebSocketTask) {
        self.socket = socket
    }

    var originalRequest: URLRequest? { socket.originalRequest }
    var currentRequest: URLRequest? { socket.originalRequest }
    var response: URLResponse? { socket.response }
    var error: (any Error)? {
        guard guarded.withLock({ $0.ended && !$0.droppedAfterOpening }) else { return nil }
        return socket.error
    }
    var countOfBytesReceived: Int64 { socket.countOfBytesReceived }
    var countOfBytesSent: Int64 { socket.countOfBytesSent }
    var countOfBytesExpectedToSend: Int64 { 0 }
    var countOfBytesExpectedToReceive: Int64 { -1 }

    var classicState: URLSessionTask.State {
        let (ended, cancelRequested, resumed) = guarded.withLock { ($0.ended, $0.cancelRequested, $0.resumed) }
        if ended { return .completed }
        if cancelRequested || socket.isClosing { return .canceling }
        return resumed ? .running : .suspended
    }

    var priority: Float {
        get { guarded.withLock { $0.priority } }
        set { guarded.withLock { $0.priority = newValue } }
    }

    var taskDescription: String? {
        get { guarded.withLock { $0.taskDescription } }
        set { guarded.withLock { $0.taskDescription = newValue } }
    }

    var closeCode: URLSessionWebSocketTask.CloseCode {
        if guarded.withLock({ $0.droppedAfterOpening }) { return .normalClosure }
        let code = socket.closeCode.rawValue
        // Codes Apple's enumeration has no case for (an application's 4xxx)
        // read as FoundationNetworking reads them.
        return URLSessionWebSocketTask.CloseCode(rawValue: code) ?? .unsupportedData
    }

    var closeReason: Data? {
        if guarded.withLock({ $0.droppedAfterOpening }) { return nil }
        return socket.closeReason
    }

    /// True the first time only.
    func markResumed() -> Bool {
        guarded.withLock { guarded in
            defer { guarded.resumed = true }
            return !guarded.resumed
        }
    }

    func markCancelRequested() {
        guarded.withLock { $0.cancelRequested = true }
    }

    func markEnded(droppedAfterOpening: Bool) {
        guarded.withLock { guarded in
            guarded.ended = true
            guarded.droppedAfterOpening = droppedAfterOpening
        }
    }

    /// True the first time only: `didOpenWithProtocol` is made once, also
    /// when the end was observed before the opening (two engine threads).
    func takeOpenDelivery() -> Bool {
        guarded.withLock { guarded in
            defer { guarded.openDelivered = true }
            return !guarded.openDelivered
        }
    }
}
