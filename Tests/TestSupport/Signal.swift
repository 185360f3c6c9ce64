import Synchronization

/// Counts occurrences of something (a completion, an invalidation) and lets a
/// test wait until it happened n times. Waiting is bounded by the test's
/// `withServer` time limit.
public final class Signal: Sendable {
    private let state = Mutex<State>(State())

    private struct State {
        var count = 0
        var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
    }

    public init() {}

    public func fire() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            let count = state.count
            let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
            state.waiters.removeAll { $0.0 <= count }
            return ready
        }
        ready.forEach { $0.resume() }
    }

    public var count: Int { state.withLock { $0.count } }

    public func wait(for count: Int = 1) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
}
