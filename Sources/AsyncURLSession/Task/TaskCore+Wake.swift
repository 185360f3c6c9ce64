import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TaskCore {
    /// A parked consumer to resume, taken out of the lock together with what
    /// it gets, and resumed after the lock is released.
    /// Unsafe continuations, not checked ones: a checked one allocates a
    /// canary per wait, and its layout is unknown to this module (a
    /// resilient stdlib type), so every `Wake?` moved through the body path
    /// went through runtime value-witness calls, about 4% of a 1 MiB body's
    /// CPU. Each waiter is taken out of `TaskMachine` under the lock when it is
    /// resumed, so it is resumed exactly once.
    enum Wake {
        case event(UnsafeContinuation<TaskEvent?, any Error>, Result<TaskEvent?, URLError>)
        case collect(UnsafeContinuation<CollectedHandOff, any Error>, Result<CollectedHandOff, URLError>)
        /// `whenCollectionEnds`: called instead of resuming anybody.
        case collectCallback(@Sendable () -> Void)
        /// Body bytes queued for a parked consumer: handed over after the
        /// engine's current read (`TaskPipeline.DeliveryAction.handOffAfterRead`).
        case handOffAfterRead(TaskCore)
        /// The wake-up is held in `ConsumerWaiters` already, put there
        /// under the lock that made it (`TaskMachine.holdForTurnEnd`):
        /// `run(by:)` only registers the task with the turn, without taking
        /// the lock again.
        case heldForTurnEnd

        /// Resumes the consumer (see `ConsumerWakeScheduling`): body bytes
        /// of a read once the read is in, so the consumer works on them
        /// while the engine reads on; other body bytes (a held body, a
        /// multipart part) at once; everything else at the end of the turn,
        /// together with the other wake-ups; while the turn tells ended
        /// transfers, at once. Off the engine's threads: now.
        /// `core`: the task whose consumer this wakes, which holds the
        /// wake-up for the turn's end (no closure to allocate).
        func run(by core: TaskCore) {
            switch self {
            case .heldForTurnEnd:
                ConsumerWakes.atTurnEnd(core)
            case .event(_, .success(.some(.data))):
                resumeNow()
            case _ where ConsumerWakes.isFinishingTransfers:
                resumeNow()
            case .handOffAfterRead:
                ConsumerWakes.afterRead(core)
            default:
                let held = core.guarded.withLock { $0.waiters.holdForTurnEnd(self) }
                if held {
                    ConsumerWakes.atTurnEnd(core)
                } else {
                    ConsumerWakes.atTurnEnd { resumeNow() }
                }
            }
        }

        fileprivate func resumeNow() {
            switch self {
            case .event(let continuation, let result): continuation.resume(with: result)
            case .collect(let continuation, let result): continuation.resume(with: result)
            case .collectCallback(let callback): callback()
            case .handOffAfterRead(let core): core.handOffQueuedEvent()
            case .heldForTurnEnd: break  // `run(by:)` registers it; never resumed itself
            }
        }
    }

    /// Resumes the consumer whose wake-up `Wake.run(by:)` held for the turn's end.
    func runAtTurnEnd() {
        let wake = guarded.withLock { $0.waiters.takeHeldWake() }
        wake?.resumeNow()
    }

    func runAfterRead() {
        handOffQueuedEvent()
    }

    /// Hands the parked consumer the event queued for it by a read, unless
    /// something else reached it first.
    func handOffQueuedEvent() {
        guard let handOff = guarded.withLock({ $0.handOffQueued() }) else { return }
        handOff.resumeReceiving?.resumeReceiving()
        handOff.waiter.resume(returning: handOff.event)
    }
}
