import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What a classic task over a connection of the core (a stream task, a
/// WebSocket task) keeps itself, since the core's connections have no task
/// state of URLSessionTask's kind: resumed, cancel asked, ended; priority
/// and description. Each model adds what is its own beside it.
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

/// A classic task model over a connection: the lifecycle behind a lock of
/// its own, and the properties every such model reads the same way.
protocol ConnectionTaskModel: ClassicTaskModel {
    var lifecycle: ConnectionTaskLifecycleRecord { get }
}

/// The lock around a `ConnectionTaskLifecycle`.
final class ConnectionTaskLifecycleRecord: Sendable {
    private let state = Mutex(ConnectionTaskLifecycle())

    func read<T>(_ body: (ConnectionTaskLifecycle) -> T) -> T { state.withLock { body($0) } }
    func change<T>(_ body: (inout ConnectionTaskLifecycle) -> T) -> T { state.withLock { body(&$0) } }
}

extension ConnectionTaskModel {
    var countOfBytesExpectedToSend: Int64 { 0 }
    var countOfBytesExpectedToReceive: Int64 { -1 }

    var priority: Float {
        get { lifecycle.read { $0.priority } }
        set { lifecycle.change { $0.priority = newValue } }
    }

    var taskDescription: String? {
        get { lifecycle.read { $0.taskDescription } }
        set { lifecycle.change { $0.taskDescription = newValue } }
    }

    func markCancelRequested() { lifecycle.change { $0.cancelRequested = true } }

    /// True the first time only.
    @discardableResult
    func markResumed() -> Bool {
        lifecycle.change { state in
            defer { state.resumed = true }
            return !state.resumed
        }
    }
}
