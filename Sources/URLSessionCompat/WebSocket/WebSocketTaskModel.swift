import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a classic WebSocket task's properties read, and the record of which
/// of its delegate calls were made (see `ConnectionTaskModel`).
typealias WebSocketTaskModel = ConnectionTaskModel<WebSocketTask>

/// What a classic WebSocket task records itself beside the core's
/// `WebSocketTask`, which has no task state of URLSessionTask's kind.
struct WebSocketTaskRecord: Sendable {
    var openDelivered = false
    /// The server dropped the connection after opening without a close
    /// frame: reported as `.normalClosure` with no reason, as
    /// FoundationNetworking does (the core says `.abnormalClosure`).
    var droppedAfterOpening = false
}

extension WebSocketTask: ClassicConnection {
    static var emptyClassicRecord: WebSocketTaskRecord { WebSocketTaskRecord() }

    var classicRequest: URLRequest? { originalRequest }
    var classicResponse: URLResponse? { response }
    var isClosingOnItsOwn: Bool { isClosing }

    /// The core's error once the task has ended, unless the server only
    /// dropped the connection after opening (FoundationNetworking reports
    /// no error then).
    func classicError(ended: Bool, _ record: WebSocketTaskRecord) -> (any Error)? {
        guard ended, !record.droppedAfterOpening else { return nil }
        return error
    }

    func classicBytesReceived(_ record: WebSocketTaskRecord) -> Int64 { countOfBytesReceived }
    func classicBytesSent(_ record: WebSocketTaskRecord) -> Int64 { countOfBytesSent }
}

extension ConnectionTaskModel<WebSocketTask> {
    var closeCode: URLSessionWebSocketTask.CloseCode {
        if record({ $0.droppedAfterOpening }) { return .normalClosure }
        let code = connection.closeCode.rawValue
        // An application's 4xxx arrives as `.other(4000)`; only a code no
        // close frame may carry reads as FoundationNetworking reads it.
        return URLSessionWebSocketTask.CloseCode(rawValue: code) ?? .unsupportedData
    }

    var closeReason: Data? {
        if record({ $0.droppedAfterOpening }) { return nil }
        return connection.closeReason
    }

    func markEnded(droppedAfterOpening: Bool) {
        markEnded { $0.droppedAfterOpening = droppedAfterOpening }
    }

    /// True the first time only: `didOpenWithProtocol` is made once, also
    /// when the end was observed before the opening (two engine threads).
    func takeOpenDelivery() -> Bool {
        record { record in
            defer { record.openDelivered = true }
            return !record.openDelivered
        }
    }
}
