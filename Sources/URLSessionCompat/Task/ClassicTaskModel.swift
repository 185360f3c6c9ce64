import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a classic task's public properties read: the core task under a
/// data, upload or download task, or the model of a WebSocket or stream
/// task (which run over a connection of the core, not a core task).
protocol ClassicTaskModel: AnyObject, Sendable {
    var originalRequest: URLRequest? { get }
    var currentRequest: URLRequest? { get }
    var response: URLResponse? { get }
    var error: (any Error)? { get }
    var countOfBytesReceived: Int64 { get }
    var countOfBytesSent: Int64 { get }
    var countOfBytesExpectedToSend: Int64 { get }
    var countOfBytesExpectedToReceive: Int64 { get }
    var progress: Progress { get }
    var classicState: URLSessionTask.State { get }
    var priority: Float { get set }
    var taskDescription: String? { get set }
}

extension SessionTask: ClassicTaskModel {
    var classicState: URLSessionTask.State {
        switch state {
        case .running: .running
        case .suspended: .suspended
        case .canceling: .canceling
        case .completed: .completed
        }
    }
}
