import Synchronization

/// Holds a completion handler's answer until `open()`, then passes it on;
/// answers after opening pass at once. Never opened: answers are dropped.
/// This is how a default implementation's immediate answer is discarded.
final class AnswerGate<Answer: Sendable>: Sendable {
    private let forward: @Sendable (Answer) -> Void
    private let state = Mutex<(isOpen: Bool, held: Answer?)>((false, nil))

    init(forward: @escaping @Sendable (Answer) -> Void) {
        self.forward = forward
    }

    /// The completion handler given to the delegate.
    var pass: @Sendable (Answer) -> Void {
        { [self] answer in
            let now = state.withLock { state -> Bool in
                if state.isOpen { return true }
                if state.held == nil { state.held = answer }
                return false
            }
            if now { forward(answer) }
        }
    }

    func open() {
        let held = state.withLock { state -> Answer? in
            state.isOpen = true
            defer { state.held = nil }
            return state.held
        }
        if let held { forward(held) }
    }
}
