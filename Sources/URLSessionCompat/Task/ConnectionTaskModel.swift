import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What a classic task over a connection of the core (a stream task, a
/// WebSocket task) keeps itself, since the core's connections have no task
/// state of URLSessionTask's kind: resumed, cancel asked, ended; priority
/// and description.
struct ConnectionTaskLifecycle: Sendable {
    var resumed = false
    var cancelRequested = false
    var ended = false
    var priority: Float = 0.5
    var taskDescription: String?

    /// URLSessionTask's state; `closing`: the connection is closing on its own.
    func classicState(closing: Bool = false) -> URLSessionTask.State {
        if ended { return .completed }
        if cancelRequested || closing { return .canceling }
        return resumed ? .running : .suspended
    }
}

/// The one model under the classic stream and WebSocket tasks: what their
/// properties read, the lifecycle and the kind's own record behind one lock.
/// What differs between the kinds is `Connection`'s (`ClassicConnection`),
/// and each kind's extra calls are in an extension for it
/// (`StreamTaskModel`, `WebSocketTaskModel`).
final class ConnectionTaskModel<Connection: ClassicConnection>: ClassicTaskModel {
    private struct State {
        var lifecycle = ConnectionTaskLifecycle()
        var record = Connection.emptyClassicRecord
    }

    let connection: Connection
    let progress = Progress(totalUnitCount: -1)
    private let state = Mutex(State())

    init(_ connection: Connection) {
        self.connection = connection
    }

    var originalRequest: URLRequest? { connection.classicRequest }
    var currentRequest: URLRequest? { connection.classicRequest }
    var response: URLResponse? { connection.classicResponse }

    var error: (any Error)? {
        let (ended, record) = state.withLock { ($0.lifecycle.ended, $0.record) }
        return connection.classicError(ended: ended, record)
    }

    var countOfBytesReceived: Int64 { connection.classicBytesReceived(state.withLock { $0.record }) }
    var countOfBytesSent: Int64 { connection.classicBytesSent(state.withLock { $0.record }) }
    var countOfBytesExpectedToSend: Int64 { 0 }
    var countOfBytesExpectedToReceive: Int64 { -1 }

    var classicState: URLSessionTask.State {
        let closing = connection.isClosingOnItsOwn
        return state.withLock { $0.lifecycle.classicState(closing: closing) }
    }

    var priority: Float {
        get { state.withLock { $0.lifecycle.priority } }
        set { state.withLock { $0.lifecycle.priority = newValue } }
    }

    var taskDescription: String? {
        get { state.withLock { $0.lifecycle.taskDescription } }
        set { state.withLock { $0.lifecycle.taskDescription = newValue } }
    }

    func markCancelRequested() { state.withLock { $0.lifecycle.cancelRequested = true } }

    /// True the first time only.
    @discardableResult
    func markResumed() -> Bool {
        state.withLock { state in
            defer { state.lifecycle.resumed = true }
            return !state.lifecycle.resumed
        }
    }

    /// The task has ended, with what the kind records of its end: both
    /// under one lock, so a reader never sees the end without its record.
    func markEnded(recording change: (inout Connection.ClassicRecord) -> Void) {
        state.withLock { state in
            change(&state.record)
            state.lifecycle.ended = true
        }
    }

    /// Reads or changes the kind's own record.
    func record<T>(_ body: (inout Connection.ClassicRecord) -> T) -> T {
        state.withLock { body(&$0.record) }
    }
}
