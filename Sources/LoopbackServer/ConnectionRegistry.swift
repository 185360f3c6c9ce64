import NIOCore
import Synchronization

/// Numbers accepted connections and remembers the open ones so shutdown() can close them.
/// Called from the event loop (accept, close) and from shutdown() on any thread, hence the lock.
final class ConnectionRegistry: Sendable {
    private struct State {
        var accepted = 0
        var open: [Int: any Channel] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    var acceptedCount: Int {
        state.withLock { $0.accepted }
    }

    var openCount: Int {
        state.withLock { $0.open.count }
    }

    /// Counts a freshly accepted connection and returns its id (1, 2, ...). After shutdown began
    /// the channel is closed at once, but still gets an id so its setup can carry on harmlessly.
    func register(_ channel: any Channel) -> Int {
        let (id, refused) = state.withLock { state -> (Int, Bool) in
            state.accepted += 1
            if !state.closed {
                state.open[state.accepted] = channel
            }
            return (state.accepted, state.closed)
        }
        if refused {
            channel.close(promise: nil)
        } else {
            channel.closeFuture.whenComplete { [self] _ in
                _ = state.withLock { $0.open.removeValue(forKey: id) }
            }
        }
        return id
    }

    /// Stops tracking and hands back the connections still open, for the caller to close.
    func closeRegistration() -> [any Channel] {
        state.withLock { state in
            state.closed = true
            defer { state.open = [:] }
            return Array(state.open.values)
        }
    }
}
