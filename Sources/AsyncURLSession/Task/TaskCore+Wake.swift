internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TaskCore: TurnWork {
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
        /// under the lock that made it (`holdForTurnEnd`): `run(by:)` only
        /// registers the task with the turn, without taking the lock again.
        case heldForTurnEnd

        /// Resumes the consumer. On the engine thread (see `EngineTurn`):
        /// body bytes of a read once the read is in, so the consumer works
        /// on them while the engine reads on; other body bytes (a held body,
        /// a multipart part) at once; everything else at the end of the
        /// turn, together with the other wake-ups; while the turn tells ended
        /// transfers, at once (`EngineTurn.isFinishingTransfers`). Anywhere
        /// else: now.
        /// `core`: the task whose consumer this wakes, which holds the
        /// wake-up for the turn's end (no closure to allocate).
        func run(by core: TaskCore) {
            switch self {
            case .heldForTurnEnd:
                EngineTurn.atEnd(core)
            case .event(_, .success(.some(.data))):
                resumeNow()
            case _ where EngineTurn.isFinishingTransfers:
                resumeNow()
            case .handOffAfterRead:
                EngineTurn.afterRead(core)
            default:
                let held = core.guarded.withLock { $0.waiters.holdForTurnEnd(self) }
                if held {
                    EngineTurn.atEnd(core)
                } else {
                    EngineTurn.atEnd { resumeNow() }
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

    /// Under the lock that made `wake`: a wake-up that `run(by:)` would hold
    /// for the turn's end is held in `ConsumerWaiters` here, so that run(by:)
    /// needs no second lock acquisition to put it there. Others unchanged.
    static func holdForTurnEnd(_ wake: Wake?, in guarded: inout TaskMachine) -> Wake? {
        switch wake {
        case nil, .event(_, .success(.some(.data)))?, .handOffAfterRead?, .heldForTurnEnd?:
            return wake
        case .event?, .collect?, .collectCallback?:
            guard let wake, EngineTurn.holdsWorkForTurnEnd, guarded.waiters.holdForTurnEnd(wake) else { return wake }
            return .heldForTurnEnd
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
        let handOff = guarded.withLock {
            guarded -> (UnsafeContinuation<TaskEvent?, any Error>, TaskEvent, Bool, (any HopExchange)?)? in
            guard guarded.waiters.isEventConsumerParked,
                case .deliver(let event, let resumeReceiving)? = guarded.pipeline.handOffQueued(),
                let waiter = guarded.waiters.takeEventConsumer()
            else { return nil }
            guarded.waiters.delivered(event)
            return (waiter, event, resumeReceiving, guarded.exchange)
        }
        guard let (waiter, event, resumeReceiving, exchange) = handOff else { return }
        if resumeReceiving, let exchange { exchange.resumeReceiving() }
        waiter.resume(returning: event)
    }

    static func wake(for action: TaskPipeline.DeliveryAction, in guarded: inout TaskMachine) -> Wake? {
        guard case .wakeConsumer(let event) = action, let waiter = guarded.waiters.takeEventConsumer() else { return nil }
        guarded.waiters.delivered(event)
        return holdForTurnEnd(.event(waiter, .success(event)), in: &guarded)
    }

    static func wake(for action: TaskPipeline.EndAction, in guarded: inout TaskMachine) -> Wake? {
        holdForTurnEnd(endWake(for: action, in: &guarded), in: &guarded)
    }

    private static func endWake(for action: TaskPipeline.EndAction, in guarded: inout TaskMachine) -> Wake? {
        switch action {
        case .wakeConsumer(let event):
            guard let waiter = guarded.waiters.takeEventConsumer() else { return nil }
            guarded.waiters.delivered(event)
            return .event(waiter, .success(event))
        case .endStream(let error):
            guard let waiter = guarded.waiters.takeEventConsumer() else { return nil }
            return .event(waiter, error.map { .failure($0) } ?? .success(nil))
        case .completeCollect:
            guard let end = guarded.pipeline.end else { return nil }
            if let callback = guarded.waiters.takeCollectCallback() { return .collectCallback(callback) }
            guard let waiter = guarded.waiters.takeCollector() else { return nil }
            return .collect(waiter, takeCollected(end, in: &guarded))
        case .none:
            return nil
        }
    }
}
