import Foundation
import Testing
import TestSupport
import URLSessionCompat

/// The properties stream and WebSocket tasks read through their one model
/// (`ConnectionTaskModel`): the same lifecycle for both kinds, and what
/// each kind reads its own way (requests, byte counts).
@Suite struct ConnectionTaskModelTests {
    private static let webSocketURL = URL(string: "ws://127.0.0.1:9/never")!

    /// One of each kind, never resumed (nothing connects).
    private static func tasks() -> [URLSessionTask] {
        let session = URLSession(configuration: .default)
        return [session.streamTask(withHostName: "127.0.0.1", port: 9), session.webSocketTask(with: webSocketURL)]
    }

    @Test func priorityAndDescription_areKeptByTheTask_forBothKinds() {
        for task in Self.tasks() {
            #expect(task.priority == URLSessionTask.defaultPriority)
            #expect(task.taskDescription == nil)
            task.priority = URLSessionTask.highPriority
            task.taskDescription = "kept"
            #expect(task.priority == URLSessionTask.highPriority, "\(type(of: task))")
            #expect(task.taskDescription == "kept", "\(type(of: task))")
        }
    }

    @Test func unresumedTasks_readSuspended_withNothingExpectedOrCounted() {
        for task in Self.tasks() {
            #expect(task.state == .suspended, "\(type(of: task))")
            #expect(task.error == nil)
            #expect(task.response == nil)
            #expect(task.countOfBytesSent == 0 && task.countOfBytesReceived == 0)
            #expect(task.countOfBytesExpectedToSend == 0 && task.countOfBytesExpectedToReceive == -1)
        }
    }

    @Test func requests_areNoneForAStream_andTheHandshakesForAWebSocket() {
        let tasks = Self.tasks()
        #expect(tasks[0].originalRequest == nil && tasks[0].currentRequest == nil)
        #expect(tasks[1].originalRequest?.url == Self.webSocketURL)
        #expect(tasks[1].currentRequest?.url == Self.webSocketURL)
    }

    @Test func streamTask_countsTheBytesItWrote() async throws {
        try await withServer { server in
            let task = URLSession(configuration: .default).streamTask(withHostName: "127.0.0.1", port: server.port)
            task.resume()
            let request = StreamTaskTests.request("/bytes/10")
            try await task.write(request, timeout: 10)
            #expect(task.countOfBytesSent == Int64(request.count))
            task.cancel()
            #expect(task.state != .running)
        }
    }
}
