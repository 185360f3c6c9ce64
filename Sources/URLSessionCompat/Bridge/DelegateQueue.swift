import Foundation

/// Runs delegate calls on the session's `OperationQueue` and lets the driver
/// wait for them, so that one task's calls happen one after the other.
struct DelegateQueue: Sendable {
    let queue: OperationQueue

    /// Runs `body` as an operation and returns once it has run.
    func run(_ body: @escaping @Sendable () -> Void) async {
        let slot = AnswerSlot<Void>()
        queue.addOperation {
            body()
            slot.fill(())
        }
        _ = await slot.wait()
    }

    /// Runs `body` as an operation; `body` answers through the handler it is
    /// given (now or later, from any thread). Returns the answer, or nil when
    /// `abandon` fired first (the task was cancelled).
    func ask<Answer: Sendable>(
        registeringWith register: (AnswerSlot<Answer>) -> Void,
        _ body: @escaping @Sendable (_ answer: @escaping @Sendable (Answer) -> Void) -> Void
    ) async -> Answer? {
        let slot = AnswerSlot<Answer>()
        register(slot)
        queue.addOperation {
            body { slot.fill($0) }
        }
        return await slot.wait()
    }
}
