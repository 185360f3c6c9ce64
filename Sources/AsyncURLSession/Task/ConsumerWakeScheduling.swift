/// Where the driver runs a parked consumer's wake-up. The engine reads many
/// transfers in one turn of its thread: resuming each consumer at once would
/// hand work to the other CPU one transfer at a time, so wake-ups made in a
/// turn are held and run together at its end, and body bytes once the read
/// that queued them is in. Off the engine's threads (a local transport, a
/// consumer's own thread) nothing is held and a wake-up runs at once.
///
/// The task asks only this (`TaskCore.ConsumerWakes`, chosen at compile
/// time, so a call costs what a direct one does); the engine's turn types
/// stay behind it (`EngineConsumerWakes`).
protocol ConsumerWakeScheduling {
    /// Whether a wake-up made now is held for the end of the current turn:
    /// lets the machine decide under its own lock that its wake-up waits.
    static var holdsWorkForTurnEnd: Bool { get }
    /// Whether the caller is a turn telling the transfers that ended in it:
    /// every socket of the turn was read, so wake-ups run at once.
    static var isFinishingTransfers: Bool { get }
    /// Runs `core.runAtTurnEnd()` at the end of the turn (at once elsewhere).
    static func atTurnEnd(_ core: TaskCore)
    /// Runs `work` at the end of the turn (at once elsewhere).
    static func atTurnEnd(_ work: @escaping @Sendable () -> Void)
    /// Runs `core.runAfterRead()` once the current read is in (at once elsewhere).
    static func afterRead(_ core: TaskCore)
    /// Whether the caller is one of the transport's own threads, where
    /// user code (a middleware) must never run.
    static var isTransportThread: Bool { get }
}
