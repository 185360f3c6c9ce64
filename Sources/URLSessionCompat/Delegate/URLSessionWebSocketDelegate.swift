import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Events of WebSocket tasks, as Apple's `URLSessionWebSocketDelegate`.
/// Both methods are optional. The task's own delegate is asked first.
public protocol URLSessionWebSocketDelegate: URLSessionTaskDelegate {
    /// The handshake completed; `protocol` is the subprotocol the server chose.
    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?)

    /// The connection closed after opening (before `didCompleteWithError`).
    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)
}

extension URLSessionWebSocketDelegate {
    public func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?
    ) {
        DefaultImplementationMarker.raise()
    }

    public func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?
    ) {
        DefaultImplementationMarker.raise()
    }
}
