import Synchronization

/// The shared machinery of every decision: a question the transfer waits on,
/// answered at most once. The first of these settles it:
/// - an explicit answer (from a handler or the events consumer),
/// - the consumer pulling the next event without answering (the default),
/// - the decision object being dropped unanswered (the default),
/// - nobody being there to ask (the default, at once).
/// So nothing can wait forever for an answer that will not come.
final class DecisionCore<Answer: Sendable>: Sendable {
    let defaultAnswer: Answer
    private let state: Mutex<State>

    private enum State {
        case pending((@Sendable (Answer) -> Void)?)
        case settled(Answer)
    }

    /// `onSettle` runs once, on the thread that settles the decision, outside
    /// the decision's lock.
    init(default defaultAnswer: Answer) {
        self.defaultAnswer = defaultAnswer
        state = Mutex(.pending(nil))
    }

    /// Sets what happens when the decision settles. If it already has, runs now.
    func onSettle(_ body: @escaping @Sendable (Answer) -> Void) {
        let settled = state.withLock { state -> Answer? in
            switch state {
            case .pending:
                state = .pending(body)
                return nil
            case .settled(let answer):
                return answer
            }
        }
        if let settled { body(settled) }
    }

    /// Settles with `answer` unless already settled. Returns whether this call settled it.
    @discardableResult
    func settle(_ answer: Answer) -> Bool {
        let callback = state.withLock { state -> ((@Sendable (Answer) -> Void)?, Bool) in
            guard case .pending(let callback) = state else { return (nil, false) }
            state = .settled(answer)
            return (callback, true)
        }
        callback.0?(answer)
        return callback.1
    }

    func settleWithDefault() {
        settle(defaultAnswer)
    }

    var answer: Answer? {
        state.withLock { state in
            if case .settled(let answer) = state { return answer }
            return nil
        }
    }

    var isSettled: Bool { answer != nil }
}

/// What the task pipeline needs from any decision, whatever its answer type.
protocol PendingDecision: Sendable {
    func settleWithDefault()
    var isSettled: Bool { get }
}

extension DecisionCore: PendingDecision {}
