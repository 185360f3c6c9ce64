import Foundation
import URLSessionCompat

/// AsyncURLSession's classic adapter: `URLSessionWebSocketTask`.
typealias ClassicEchoClient = TaskEchoClient<URLSessionCompat.URLSessionWebSocketTask>

extension TaskEchoClient where Socket == URLSessionCompat.URLSessionWebSocketTask {
    init() {
        self.init(name: "URLSessionCompat URLSessionWebSocketTask") {
            URLSession(configuration: .ephemeral).webSocketTask(with: $0)
        }
    }
}

extension URLSessionCompat.URLSessionWebSocketTask: EchoSocket {}
extension URLSessionCompat.URLSessionWebSocketTask.CloseCode: EchoCloseCode {}
extension URLSessionCompat.URLSessionWebSocketTask.Message: EchoMessage {
    var binary: Data? { if case .data(let data) = self { data } else { nil } }
}
