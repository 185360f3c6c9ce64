internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The consumer's side of the machine: which parked consumer a transition
/// wakes (taken out of `waiters` here, resumed by the driver after the
/// lock), what a pull finds ready, and the collected body handed over.
extension TaskMachine {
    typealias Wake = TaskCore.Wake

    /// The parked events consumer, if a delivery reached it.
    mutating func wake(for action: TaskPipeline.DeliveryAction) -> Wake? {
        guard case .wakeConsumer(let event) = action, let waiter = waiters.takeEventConsumer() else { return nil }
        waiters.delivered(event)
        return holdForTurnEnd(.event(waiter, .success(event)))
    }

    /// The parked consumer (events or collector) the task's end reaches.
    mutating func wake(for action: TaskPipeline.EndAction) -> Wake? {
        holdForTurnEnd(endWake(for: action))
    }

    private mutating func endWake(for action: TaskPipeline.EndAction) -> Wake? {
        switch action {
        case .wakeConsumer(let event):
            guard let waiter = waiters.takeEventConsumer() else { return nil }
            waiters.delivered(event)
            return .event(waiter, .success(event))
        case .endStream(let error):
            guard let waiter = waiters.takeEventConsumer() else { return nil }
            return .event(waiter, error.map { .failure($0) } ?? .success(nil))
        case .completeCollect:
            guard let end = pipeline.end else { return nil }
            if let callback = waiters.takeCollectCallback() { return .collectCallback(callback) }
            guard let waiter = waiters.takeCollector() else { return nil }
            return .collect(waiter, takeCollected(end))
        case .none:
            return nil
        }
    }

    /// Under the lock that made `wake`: a wake-up that `Wake.run(by:)` would
    /// hold for the turn's end is held in `ConsumerWaiters` here, so that
    /// run(by:) needs no second lock acquisition to put it there. Others
    /// unchanged.
    mutating func holdForTurnEnd(_ wake: Wake?) -> Wake? {
        switch wake {
        case nil, .event(_, .success(.some(.data)))?, .handOffAfterRead?, .heldForTurnEnd?:
            return wake
        case .event?, .collect?, .collectCallback?:
            guard let wake, TaskCore.ConsumerWakes.holdsWorkForTurnEnd, waiters.holdForTurnEnd(wake) else { return wake }
            return .heldForTurnEnd
        }
    }

    /// The queued event or end, taken for a consumer that is not parked;
    /// nil when it must wait.
    mutating func takeReadyEvent() -> (TaskPipeline.NextAction, (any HopExchange)?)? {
        guard !waiters.isEventConsumerParked, let action = pipeline.nextIfReady() else { return nil }
        if case .deliver(let event, _) = action { waiters.delivered(event) }
        return (action, exchange)
    }

    /// The collected body and the response it answers, taken out of the
    /// pipeline under the lock that saw the end (the waker's, or
    /// `collect()`'s own when the end came first) and handed to the waiting
    /// consumer with its resumption: no second acquisition to take them.
    mutating func takeCollected(_ end: Result<Void, URLError>) -> Result<TaskCore.CollectedHandOff, URLError> {
        end.map { TaskCore.CollectedHandOff(body: pipeline.takeCollectedBody(), source: pipeline.responseSource) }
    }

    /// A pull's first step: settles what the previous hand-off left open
    /// (returned for the driver to settle after the lock) and, when that
    /// cannot queue anything, takes the next ready event too.
    mutating func pull() -> ConsumerPull {
        guard !waiters.hasLeftOpen else {
            let (outstanding, file) = waiters.takeLeftOpen()
            // A response decision's default (allow) changes nothing and
            // queues nothing: the next event is taken now too, and the
            // decision settled after the lock.
            if file == nil, case .response? = outstanding {
                return ConsumerPull(outstanding: outstanding, handedOutFile: nil, ready: takeReadyEvent(), looked: true)
            }
            return ConsumerPull(outstanding: outstanding, handedOutFile: file, ready: nil, looked: false)
        }
        return ConsumerPull(outstanding: nil, handedOutFile: nil, ready: takeReadyEvent(), looked: true)
    }

    /// A pull that found nothing ready, with the consumer's continuation:
    /// it is parked, or gets what came meanwhile (or a second consumer's
    /// error).
    mutating func parkEventConsumer(
        _ continuation: UnsafeContinuation<TaskEvent?, any Error>, failingURL: String?
    ) -> ParkedPull {
        if waiters.isEventConsumerParked {
            // `events` has one consumer; a second would steal its events.
            return ParkedPull(
                action: .failStream(URLError.make(
                    .unknown, url: failingURL,
                    reason: "task.events is already being iterated elsewhere; a task's events have one consumer.")),
                exchange: nil, beforeBody: false)
        }
        let action = pipeline.next()
        switch action {
        case .wait: waiters.parkEventConsumer(continuation)
        case .deliver(let event, _): waiters.delivered(event)
        default: break
        }
        return ParkedPull(action: action, exchange: exchange, beforeBody: pipeline.bytesReceived == 0)
    }

    /// `collect()`'s wait: the end if it came, else the collector parks
    /// (with the exchange to wait on inline while no body flows yet).
    mutating func parkCollector(
        _ continuation: UnsafeContinuation<TaskCore.CollectedHandOff, any Error>
    ) -> (Result<TaskCore.CollectedHandOff, URLError>?, (any HopExchange)?) {
        if let end = pipeline.end { return (takeCollected(end), nil) }
        waiters.parkCollector(continuation)
        // A transfer whose body flows already is the engine thread's (see `waitInlineBeforeBody`).
        return (nil, pipeline.bytesReceived == 0 ? exchange : nil)
    }

    /// The parked consumer and the event a read queued for it, unless
    /// something else reached it first (`handOffAfterRead`).
    mutating func handOffQueued() -> QueuedHandOff? {
        guard waiters.isEventConsumerParked,
            case .deliver(let event, let resumeReceiving)? = pipeline.handOffQueued(),
            let waiter = waiters.takeEventConsumer()
        else { return nil }
        waiters.delivered(event)
        return QueuedHandOff(waiter: waiter, event: event, resumeReceiving: resumeReceiving ? exchange : nil)
    }

    /// `whenCollectionEnds`: true when the collection ended already, else
    /// the callback waits for the end.
    mutating func callWhenCollectionEnds(_ callback: @escaping @Sendable () -> Void) -> Bool {
        if pipeline.end != nil { return true }
        waiters.callWhenCollectionEnds(callback)
        return false
    }
}

/// What `TaskMachine.pull()` leaves to the driver.
struct ConsumerPull {
    /// The previous event's decision, to settle with its default.
    let outstanding: OutstandingDecision?
    /// A downloaded file handed out before and not moved: deleted now.
    let handedOutFile: URL?
    /// The next event or end, when it was looked for.
    let ready: (TaskPipeline.NextAction, (any HopExchange)?)?
    /// Whether the next event was looked for (else: look after settling).
    let looked: Bool
}

/// What `TaskMachine.parkEventConsumer` leaves to the driver.
struct ParkedPull {
    let action: TaskPipeline.NextAction
    let exchange: (any HopExchange)?
    /// Nothing of the body came yet: the consumer may wait inline.
    let beforeBody: Bool
}

/// A queued event for the parked consumer (`TaskMachine.handOffQueued`).
struct QueuedHandOff {
    let waiter: UnsafeContinuation<TaskEvent?, any Error>
    let event: TaskEvent
    /// The exchange to resume receiving, if the hand-off made room.
    let resumeReceiving: (any HopExchange)?
}
