import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A connection of the core that a classic task runs over (a stream task's
/// `StreamTask`, a WebSocket task's `WebSocketTask`), and what differs in
/// how `ConnectionTaskModel` reads the task's properties for each kind.
///
/// The core's connections keep no task state of URLSessionTask's kind, so
/// the model keeps it: the lifecycle for every kind, and a `ClassicRecord`
/// for what a kind records of its own (a stream task counts its bytes, a
/// WebSocket task remembers its delegate calls).
protocol ClassicConnection: AnyObject, Sendable {
    associatedtype ClassicRecord: Sendable

    /// The record of a task that has not started.
    static var emptyClassicRecord: ClassicRecord { get }

    var classicRequest: URLRequest? { get }
    var classicResponse: URLResponse? { get }
    /// The connection is closing on its own (the task reads `.canceling`).
    var isClosingOnItsOwn: Bool { get }

    /// The task's `error`: `ended` once the task has ended.
    func classicError(ended: Bool, _ record: ClassicRecord) -> (any Error)?
    func classicBytesReceived(_ record: ClassicRecord) -> Int64
    func classicBytesSent(_ record: ClassicRecord) -> Int64
}
