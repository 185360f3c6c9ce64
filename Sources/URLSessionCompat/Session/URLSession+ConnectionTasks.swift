import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// A WebSocket task for a ws:// or wss:// URL. Starts suspended.
    public func webSocketTask(with url: URL) -> URLSessionWebSocketTask {
        webSocketTask(with: URLRequest(url: url))
    }

    /// Offers `protocols` (Sec-WebSocket-Protocol); the server's choice
    /// comes to `didOpenWithProtocol`.
    public func webSocketTask(with url: URL, protocols: [String]) -> URLSessionWebSocketTask {
        var request = URLRequest(url: url)
        if !protocols.isEmpty {
            request.setValue(protocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        return webSocketTask(with: request)
    }

    /// The request's header fields go on the Upgrade request.
    public func webSocketTask(with request: URLRequest) -> URLSessionWebSocketTask {
        let socket = asyncSession.webSocketTask(with: request)
        return register { URLSessionWebSocketTask(socket: socket, identifier: $0, session: self) }
    }
}

extension URLSession {
    /// A stream task to `hostname` and `port`. Starts suspended; the
    /// connection opens at the first read or write.
    public func streamTask(withHostName hostname: String, port: Int) -> URLSessionStreamTask {
        let stream = asyncSession.streamTask(withHostName: hostname, port: port)
        return register { URLSessionStreamTask(stream: stream, identifier: $0, session: self) }
    }
}
