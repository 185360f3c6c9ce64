import Synchronization

/// Where the driver waits for one answer: a delegate's completion handler, or
/// the end of a delegate call. Filled at most once; `abandon()` (on cancel)
/// resumes the driver with nil so a delegate that never calls its completion
/// handler cannot keep a cancelled task alive.
final class AnswerSlot<Answer: Sendable>: Sendable {
    private let state = Mutex<State>(.empty)

    private enum State {
        case empty
        case waiting(CheckedContinuation<Answer?, Never>)
        case filled(Answer?)
        case taken
    }

    /// Gives the answer (the first call wins; later ones, such as a completion
    /// handler called twice, are ignored).
    func fill(_ answer: Answer?) {
        let waiter = state.withLock { state -> CheckedContinuation<Answer?, Never>? in
            switch state {
            case .empty:
                state = .filled(answer)
                return nil
            case .waiting(let continuation):
                state = .taken
                return continuation
            case .filled, .taken:
                return nil
            }
        }
        waiter?.resume(returning: answer)
    }

    func abandon() { fill(nil) }

    /// Waits for the answer (nil when abandoned).
    func wait() async -> Answer? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Answer?? in
                switch state {
                case .empty:
                    state = .waiting(continuation)
                    return nil
                case .filled(let answer):
                    state = .taken
                    return .some(answer)
                case .waiting, .taken:
                    // One waiter per slot: a second wait gets nothing.
                    return .some(nil)
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
