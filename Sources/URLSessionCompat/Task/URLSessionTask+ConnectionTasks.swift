import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What WebSocket and stream tasks, which have no driver, use to reach
/// their delegates and completion handlers.
extension URLSessionTask {
    /// A call that answers nothing, for tasks without a driver (WebSocket,
    /// stream): the task's own delegate, then the session's; the first
    /// that implements the method is called.
    func notify<Delegate>(_ type: Delegate.Type, session: URLSession, _ call: (Delegate) -> Void) {
        for candidate in [delegate, session.delegate].compactMap({ $0 }) {
            guard let delegate = candidate as? Delegate else { continue }
            if !DefaultImplementationMarker.ranDefault({ call(delegate) }) { return }
        }
    }

    /// Runs `work` and hands its result to `completion` on the session's
    /// delegate queue (the completion handlers of WebSocket and stream tasks).
    func answerOnDelegateQueue<Value: Sendable>(
        _ work: @escaping @Sendable () async throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        let queue = session?.delegateQueue
        Task {
            let result: Result<Value, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            if let queue { queue.addOperation { completion(result) } } else { completion(result) }
        }
    }
}
