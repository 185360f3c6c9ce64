import AsyncURLSession
import Foundation

/// AsyncURLSession's core `WebSocketTask`.
typealias CoreEchoClient = TaskEchoClient<WebSocketTask>

extension TaskEchoClient where Socket == WebSocketTask {
    init() {
        self.init(name: "AsyncURLSession WebSocketTask") {
            Session(configuration: .ephemeral).webSocketTask(with: $0)
        }
    }
}

extension WebSocketTask: EchoSocket {}
extension WebSocketCloseCode: EchoCloseCode {}
extension WebSocketMessage: EchoMessage {
    var binary: Data? { if case .data(let data) = self { data } else { nil } }
}
