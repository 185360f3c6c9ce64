internal import CurlEngine

/// The engine's turns as the task's wake-up scheduler: see
/// `ConsumerWakeScheduling` and `EngineTurn`. The task itself is the turn's
/// work item (no box per wake-up).
enum EngineConsumerWakes: ConsumerWakeScheduling {
    static var holdsWorkForTurnEnd: Bool { EngineTurn.holdsWorkForTurnEnd }
    static var isFinishingTransfers: Bool { EngineTurn.isFinishingTransfers }
    static func atTurnEnd(_ core: TaskCore) { EngineTurn.atEnd(core) }
    static func atTurnEnd(_ work: @escaping @Sendable () -> Void) { EngineTurn.atEnd(work) }
    static func afterRead(_ core: TaskCore) { EngineTurn.afterRead(core) }
    static var isTransportThread: Bool { EngineTurn.isEngineThread }
}

extension TaskCore {
    /// Where this task's consumer wake-ups run.
    typealias ConsumerWakes = EngineConsumerWakes
}

extension TaskCore: TurnWork {}
