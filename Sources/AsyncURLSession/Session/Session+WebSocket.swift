import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// A WebSocket task for a ws:// or wss:// URL, offering `protocols`
    /// (Sec-WebSocket-Protocol). It starts suspended: call `resume()`.
    public nonisolated func webSocketTask(with url: URL, protocols: [String] = []) -> WebSocketTask {
        var request = URLRequest(url: url)
        if !protocols.isEmpty { request.setValue(protocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol") }
        return webSocketTask(with: request)
    }

    /// A WebSocket task for a request: its header fields go on the Upgrade
    /// request (a Sec-WebSocket-Protocol field offers subprotocols).
    public nonisolated func webSocketTask(with request: URLRequest) -> WebSocketTask {
        WebSocketTask(connection: WebSocketConnection(
            identifier: context.nextRefusedIdentifier(), context: context, request: request))
    }
}
