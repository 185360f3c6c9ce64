import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a WebSocket connection ended, as its observer hears it.
public enum WebSocketEnding: Sendable, Equatable {
    /// Close frames went both ways, or ours went and the server then closed.
    case closed
    /// The server ended the TCP connection after the handshake without a
    /// close frame (`closeCode` is then `.abnormalClosure`, RFC 6455 §7.1.5).
    case droppedAfterOpening(URLError)
    /// The handshake failed, the protocol was broken, the network failed,
    /// or the task was cancelled before it opened.
    case failed(URLError)

    /// The error the connection's callers see, nil after a clean close.
    var error: URLError? {
        switch self {
        case .closed: nil
        case .droppedAfterOpening(let error), .failed(let error): error
        }
    }
}

/// What a WebSocket connection tells its observer (the classic adapter's
/// delegate calls), once each, after its lock is let go: `opened` before
/// `ended` on the same thread when both come from one read.
public enum WebSocketLifecycleEvent: Sendable {
    case opened(protocol: String?)
    /// `wasOpen`: the handshake had completed.
    case ended(WebSocketEnding, wasOpen: Bool)
}
