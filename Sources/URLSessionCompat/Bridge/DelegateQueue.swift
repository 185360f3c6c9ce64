import Foundation
import Synchronization

/// Runs one task's delegate calls on the session's `OperationQueue`, one
/// after the other in the order they were added, even on a concurrent queue:
/// each operation depends on the one before it.
///
/// Calls that answer nothing and carry body bytes (`didReceiveData`,
/// progress) may be posted without waiting, up to `postedByteLimit` bytes in
/// flight: the driver pulls the next chunk while the delegate handles this
/// one, instead of one queue round trip per chunk. Past the limit the driver
/// waits, so a slow delegate still slows its transfer.
final class DelegateQueue: Sendable {
    let queue: OperationQueue
    static let postedByteLimit = 1 << 20
    private let state = Mutex(State())

    private struct State: @unchecked Sendable {
        // @unchecked: Operation is a thread-safe Foundation class; it is only
        // read and replaced under this lock.
        /// Weak: the queue keeps an operation until it has run, and a finished
        /// one needs no successor waiting on it. (A strong reference would
        /// also keep the last call's delegate alive after the task ended.)
        weak var last: Operation?
        var postedBytes = 0
    }

    init(queue: OperationQueue) {
        self.queue = queue
    }

    /// Adds `body` after every operation added before it.
    private func enqueue(_ body: @escaping @Sendable () -> Void) {
        let operation = BlockOperation(block: body)
        state.withLock { state in
            if let last = state.last, !last.isFinished { operation.addDependency(last) }
            state.last = operation
        }
        queue.addOperation(operation)
    }

    /// Runs `body` in order; returns at once.
    func post(_ body: @escaping @Sendable () -> Void) {
        enqueue(body)
    }

    /// Runs `body` in order and returns once it has run.
    func run(_ body: @escaping @Sendable () -> Void) async {
        let slot = AnswerSlot<Void>()
        enqueue {
            body()
            slot.fill(())
        }
        _ = await slot.wait()
    }

    /// Runs `body` in order; returns at once while fewer than
    /// `postedByteLimit` posted bytes wait, else once it has run.
    func post(bytes: Int, _ body: @escaping @Sendable () -> Void) async {
        let mustWait = state.withLock { state -> Bool in
            state.postedBytes += bytes
            return state.postedBytes > Self.postedByteLimit
        }
        let slot = AnswerSlot<Void>()
        enqueue { [self] in
            body()
            state.withLock { $0.postedBytes -= bytes }
            slot.fill(())
        }
        if mustWait { _ = await slot.wait() }
    }

    /// Runs `body` in order; `body` answers through the handler it is given
    /// (now or later, from any thread). Returns the answer, or nil when
    /// `abandon` fired first (the task was cancelled).
    func ask<Answer: Sendable>(
        registeringWith register: (AnswerSlot<Answer>) -> Void,
        _ body: @escaping @Sendable (_ answer: @escaping @Sendable (Answer) -> Void) -> Void
    ) async -> Answer? {
        let slot = AnswerSlot<Answer>()
        register(slot)
        enqueue {
            body { slot.fill($0) }
        }
        return await slot.wait()
    }
}
