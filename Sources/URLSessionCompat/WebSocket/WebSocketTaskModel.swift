import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What a classic WebSocket task's properties read, and the record of which
/// of its delegate calls were made: the core's `WebSocketTask` has no
/// task state of URLSessionTask's kind, so it is kept here.
final class WebSocketTaskModel: ConnectionTaskModel {
    let socket: WebSocketTask
    let progress = Progress(totalUnitCount: -1)
    let lifecycle = ConnectionTaskLifecycleRecord()

    private struct Guarded {
        var openDelivered = false
        /// The server dropped the connection after opening without a close
        /// frame: reported as `.normalClosure` with no reason, as
        /// FoundationNetworking does (the core says `.abnormalClosure`).
        var droppedAfterOpening = false
    }

    private let guarded = Mutex(Guarded())

    init(socket: WebSocketTask) {
        self.socket = socket
    }

    var originalRequest: URLRequest? { socket.originalRequest }
    var currentRequest: URLRequest? { socket.originalRequest }
    var response: URLResponse? { socket.response }
    var error: (any Error)? {
        guard lifecycle.read({ $0.ended }), !guarded.withLock({ $0.droppedAfterOpening }) else { return nil }
        return socket.error
    }
    var countOfBytesReceived: Int64 { socket.countOfBytesReceived }
    var countOfBytesSent: Int64 { socket.countOfBytesSent }

    var classicState: URLSessionTask.State {
        let closing = socket.isClosing
        return lifecycle.read { $0.classicState(closing: closing) }
    }

    var closeCode: URLSessionWebSocketTask.CloseCode {
        if guarded.withLock({ $0.droppedAfterOpening }) { return .normalClosure }
        let code = socket.closeCode.rawValue
        // An application's 4xxx arrives as `.other(4000)`; only a code no
        // close frame may carry reads as FoundationNetworking reads it.
        return URLSessionWebSocketTask.CloseCode(rawValue: code) ?? .unsupportedData
    }

    var closeReason: Data? {
        if guarded.withLock({ $0.droppedAfterOpening }) { return nil }
        return socket.closeReason
    }

    func markEnded(droppedAfterOpening: Bool) {
        // The reason first: `error` reads it once `ended` is set.
        guarded.withLock { $0.droppedAfterOpening = droppedAfterOpening }
        lifecycle.change { $0.ended = true }
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
