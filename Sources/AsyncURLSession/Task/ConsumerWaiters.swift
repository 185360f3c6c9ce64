import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The consumer's side of a task: who is parked waiting for it (a pull of
/// `events`, a collecting `data(for:)`, the classic completion handler's
/// callback), the one wake-up held for the end of the engine turn that made
/// it, and what the last hand-off left open until the next pull (a decision
/// to settle with its default, a downloaded file to delete unless moved).
///
/// A value type inside `TaskMachine`, changed only by these
/// transitions under the task's lock. Every `take` clears what it returns,
/// so a parked consumer is resumed exactly once, by whoever took it.
struct ConsumerWaiters {
    typealias EventWaiter = UnsafeContinuation<TaskEvent?, any Error>
    typealias CollectWaiter = UnsafeContinuation<TaskCore.CollectedHandOff, any Error>

    private(set) var eventWaiter: EventWaiter?
    private(set) var collectWaiter: CollectWaiter?
    /// `whenCollectionEnds`'s callback, until the task ends.
    private(set) var collectCallback: (@Sendable () -> Void)?
    /// A wake-up held for the end of the engine turn that made it (see
    /// `TaskCore.Wake.run(by:)`); at most one, as a task has one waiting consumer.
    private(set) var heldWake: TaskCore.Wake?
    /// The decision of the last event handed to the consumer: settled with
    /// its default when the consumer pulls again.
    private(set) var outstandingDecision: OutstandingDecision?
    /// A `downloaded` file handed to the consumer: deleted at its next pull
    /// unless it was moved.
    private(set) var fileToDeleteOnNextPull: URL?

    var isEventConsumerParked: Bool { eventWaiter != nil }
    var isCollectorParked: Bool { collectWaiter != nil }
    /// Whether a pull must first settle what the previous hand-off left open.
    var hasLeftOpen: Bool { outstandingDecision != nil || fileToDeleteOnNextPull != nil }

    // MARK: - Parking and taking

    /// A pull of `events` found nothing ready. The caller checked
    /// `isEventConsumerParked` first: `events` has one consumer.
    mutating func parkEventConsumer(_ waiter: EventWaiter) {
        eventWaiter = waiter
    }

    mutating func takeEventConsumer() -> EventWaiter? {
        defer { eventWaiter = nil }
        return eventWaiter
    }

    mutating func parkCollector(_ waiter: CollectWaiter) {
        collectWaiter = waiter
    }

    mutating func takeCollector() -> CollectWaiter? {
        defer { collectWaiter = nil }
        return collectWaiter
    }

    mutating func callWhenCollectionEnds(_ callback: @escaping @Sendable () -> Void) {
        collectCallback = callback
    }

    mutating func takeCollectCallback() -> (@Sendable () -> Void)? {
        defer { collectCallback = nil }
        return collectCallback
    }

    // MARK: - What a hand-off leaves open

    /// An event went to the consumer: its decision is outstanding until the
    /// next pull, and a downloaded file lives until then.
    mutating func delivered(_ event: TaskEvent) {
        outstandingDecision = event.decision
        if case .downloaded(let url) = event { fileToDeleteOnNextPull = url }
    }

    /// The next pull: what the previous hand-off left open, to settle after
    /// the lock (a default can take the lock again).
    mutating func takeLeftOpen() -> (decision: OutstandingDecision?, file: URL?) {
        defer { (outstandingDecision, fileToDeleteOnNextPull) = (nil, nil) }
        return (outstandingDecision, fileToDeleteOnNextPull)
    }

    /// The task's last reference went away: an outstanding response
    /// decision is settled by the caller; other decisions stay (they hold
    /// the core weakly).
    mutating func takeOutstandingResponseDecision() -> ResponseDecision? {
        guard case .response(let decision)? = outstandingDecision else { return nil }
        outstandingDecision = nil
        return decision
    }

    // MARK: - The wake-up held for the turn's end

    /// Holds `wake` for the engine turn's end; false when one is held
    /// already (the caller then schedules its own).
    mutating func holdForTurnEnd(_ wake: TaskCore.Wake) -> Bool {
        guard heldWake == nil else { return false }
        heldWake = wake
        return true
    }

    mutating func takeHeldWake() -> TaskCore.Wake? {
        defer { heldWake = nil }
        return heldWake
    }
}
