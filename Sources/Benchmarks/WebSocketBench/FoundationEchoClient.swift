import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// FoundationNetworking's `URLSessionWebSocketTask`: it needs a libcurl
/// built with WebSocket support, which Debian's is not; then the row says
/// why it has no figure.
typealias FoundationEchoClient = TaskEchoClient<FoundationNetworking.URLSessionWebSocketTask>

extension TaskEchoClient where Socket == FoundationNetworking.URLSessionWebSocketTask {
    init() {
        self.init(
            name: "FoundationNetworking URLSessionWebSocketTask",
            openFailureNote: "FoundationNetworking's WebSocket tasks need a libcurl built with "
                + "WebSocket support, which Debian 12's libcurl 7.88.1 is not") {
            URLSession(configuration: .ephemeral).webSocketTask(with: $0)
        }
    }
}

extension FoundationNetworking.URLSessionWebSocketTask: EchoSocket {}
extension FoundationNetworking.URLSessionWebSocketTask.CloseCode: EchoCloseCode {}
extension FoundationNetworking.URLSessionWebSocketTask.Message: EchoMessage {
    var binary: Data? { if case .data(let data) = self { data } else { nil } }
}
