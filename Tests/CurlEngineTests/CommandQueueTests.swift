import Glibc
import Synchronization
import Testing

@testable import CurlEngine

/// The eventfd is written only when the engine said it is about to block, and
/// a start while it sleeps with nothing in flight runs as an inline turn.
@Suite struct CommandQueueTests {
    private let command = EngineCommand.closeSession(EngineSessionID(serial: 1, shardCount: 1))

    /// Reads the eventfd's counter without blocking: nil when nothing was written.
    private func takeSignal(_ queue: CommandQueue) -> UInt64? {
        var counter: UInt64 = 0
        let count = withUnsafeMutableBytes(of: &counter) { read(queue.eventFD, $0.baseAddress, 8) }
        return count == 8 ? counter : nil
    }

    @Test func enqueue_whileEngineAwake_writesNothing() {
        let queue = CommandQueue()
        queue.enqueue(command)
        #expect(takeSignal(queue) == nil)
        #expect(!queue.prepareToSleep(idle: false), "a command waits")
        var batch: [EngineCommand?] = []
        queue.drain(into: &batch)
        #expect(batch.count == 1)
        #expect(queue.prepareToSleep(idle: false), "drained")
    }

    @Test func enqueue_afterPrepareToSleep_writesOnceForABurst() {
        let queue = CommandQueue()
        #expect(queue.prepareToSleep(idle: false))
        queue.enqueue(command)
        queue.enqueue(command)
        #expect(takeSignal(queue) == 1)
        var batch: [EngineCommand?] = []
        queue.drain(into: &batch)
        #expect(batch.count == 2)
    }

    @Test func prepareToSleep_withCommandsWaiting_refuses() {
        let queue = CommandQueue()
        queue.enqueue(command)
        #expect(!queue.prepareToSleep(idle: false))
        queue.enqueue(command)
        #expect(takeSignal(queue) == nil)
    }

    @Test func drain_afterAWrite_resetsTheCounter() {
        let queue = CommandQueue()
        #expect(queue.prepareToSleep(idle: false))
        queue.enqueue(command)
        queue.awoke()
        var batch: [EngineCommand?] = []
        queue.drain(into: &batch)
        #expect(batch.count == 1)
        #expect(takeSignal(queue) == nil)
    }

    /// A turn woken from a blocking wait takes the commands that woke it in
    /// the same acquisition that notes it awake: producers then see it awake
    /// (no write), and the counter is reset.
    @Test func awokeDraining_takesTheCommandsAndResetsTheCounter() {
        let queue = CommandQueue()
        #expect(queue.prepareToSleep(idle: false))
        queue.enqueue(command)
        var batch: [EngineCommand?] = []
        queue.awoke(draining: &batch)
        #expect(batch.count == 1)
        #expect(takeSignal(queue) == nil, "the engine reset it")
        queue.enqueue(command)
        #expect(takeSignal(queue) == nil, "awake: nothing written")
        #expect(!queue.prepareToSleep(idle: false), "the later command waits for the next turn")
    }

    // MARK: Inline turns

    /// A start command, for the inline tests (never run: the fake turns only drain).
    private var start: EngineCommand {
        let placement = TransferPlacement(session: EngineSessionID(serial: 1, shardCount: 1), connectionLimit: 0)
        let request = TransferRequest(
            url: "http://127.0.0.1:1/", method: "GET", headers: [], body: .none, idleTimeout: 1, resourceTimeout: 1,
            trustRootsPEM: nil, acceptEncoding: nil)
        return .start(TransferID(serial: 2, shard: 0), placement, request, collectsMetrics: false, NoDelegate())
    }

    /// A queue with a draining inline turn installed, whose engine went to sleep.
    private func sleepingQueue(idle: Bool, turnSucceeds: Bool = true) -> (CommandQueue, DrainingTurn) {
        let queue = CommandQueue()
        let turn = DrainingTurn(queue: queue, succeeds: turnSucceeds)
        queue.install(turn)
        #expect(queue.prepareToSleep(idle: idle))
        return (queue, turn)
    }

    /// The transfer the fake inline turns report starting.
    private let sole = DrainingTurn.started

    /// A queue whose sleeping engine thread had a start run inline: the
    /// started transfer is its only one.
    private func queueAfterAnInlineStart() -> (CommandQueue, DrainingTurn) {
        let (queue, turn) = sleepingQueue(idle: true)
        queue.enqueue(start)
        return (queue, turn)
    }

    @Test func start_whileEngineSleepsIdle_runsATurnInsteadOfWaking() {
        let (queue, turn) = sleepingQueue(idle: true)
        queue.enqueue(start)
        #expect(turn.runs.load(ordering: .relaxed) == 1)
        #expect(turn.drained.load(ordering: .relaxed) == 1, "the turn ran the start")
        #expect(takeSignal(queue) == nil, "the engine thread was not woken")
    }

    @Test func afterAnInlineTurn_theEngineCountsAsBusy() {
        let (queue, turn) = sleepingQueue(idle: true)
        queue.enqueue(start)
        queue.enqueue(start)
        #expect(turn.runs.load(ordering: .relaxed) == 1, "a transfer is in flight now: the second start wakes the engine")
        #expect(takeSignal(queue) == 1)
    }

    @Test func start_whileTransfersRun_wakesTheEngine() {
        let (queue, turn) = sleepingQueue(idle: false)
        queue.enqueue(start)
        #expect(turn.runs.load(ordering: .relaxed) == 0)
        #expect(takeSignal(queue) == 1)
    }

    @Test func otherCommands_wakeTheEngine() {
        let (queue, turn) = sleepingQueue(idle: true)
        queue.enqueue(command)
        #expect(turn.runs.load(ordering: .relaxed) == 0)
        #expect(takeSignal(queue) == 1)
    }

    @Test func aTurnThatCannotRun_wakesTheEngine() {
        let (queue, turn) = sleepingQueue(idle: true, turnSucceeds: false)
        queue.enqueue(start)
        #expect(turn.runs.load(ordering: .relaxed) == 1)
        #expect(takeSignal(queue) == 1, "the start is still queued for the engine thread")
        var batch: [EngineCommand?] = []
        queue.drain(into: &batch)
        #expect(batch.count == 1)
    }

    @Test func endInlineTurn_afterTheEngineWoke_refuses() {
        let queue = CommandQueue()
        #expect(queue.prepareToSleep(idle: true))
        queue.awoke()
        #expect(!queue.endInlineTurn(), "the engine thread is running: producers must not see it asleep")
    }

    // MARK: Inline waits

    @Test func waitInline_forTheTransferAnInlineTurnStarted_isOffered() {
        let (queue, turn) = queueAfterAnInlineStart()
        queue.waitInline(for: sole, limit: 1_000, until: { true })
        #expect(turn.waits.load(ordering: .relaxed) == 1)
    }

    @Test func waitInline_forAnotherTransfer_orOneTheEngineThreadStarted_isNot() {
        let (queue, turn) = queueAfterAnInlineStart()
        queue.waitInline(for: TransferID(serial: 3, shard: 0), limit: 1_000, until: { true })
        #expect(turn.waits.load(ordering: .relaxed) == 0)
        let (asleep, asleepTurn) = sleepingQueue(idle: false)
        asleep.waitInline(for: sole, limit: 1_000, until: { true })
        #expect(asleepTurn.waits.load(ordering: .relaxed) == 0, "no inline turn started it")
    }

    @Test func waitInline_whileTheEngineRuns_orCommandsWait_isNot() {
        let (queue, turn) = queueAfterAnInlineStart()
        queue.enqueue(command)
        queue.waitInline(for: sole, limit: 1_000, until: { true })
        #expect(turn.waits.load(ordering: .relaxed) == 0, "a command is queued: the engine thread was woken for it")
        queue.awoke()
        var batch: [EngineCommand?] = []
        queue.drain(into: &batch)
        queue.waitInline(for: sole, limit: 1_000, until: { true })
        #expect(turn.waits.load(ordering: .relaxed) == 0, "the engine thread is running a turn")
    }

    @Test func wakeSleepingEngine_writesOnce_andOnlyWhileItSleeps() {
        let queue = CommandQueue()
        queue.wakeSleepingEngine()
        #expect(takeSignal(queue) == nil, "awake: nothing to do")
        #expect(queue.prepareToSleep(idle: false))
        queue.wakeSleepingEngine()
        queue.wakeSleepingEngine()
        #expect(takeSignal(queue) == 1)
    }

    @Test func sleepsOn_afterAWaitThatEndedTheTransfer_letsTheNextStartRunInline() {
        let (queue, turn) = sleepingQueue(idle: false)
        queue.sleepsOn(idle: true)
        queue.enqueue(start)
        #expect(turn.runs.load(ordering: .relaxed) == 1)
        #expect(takeSignal(queue) == nil)
    }

    @Test func awoke_thenEnqueue_writesNothing() {
        let queue = CommandQueue()
        #expect(queue.prepareToSleep(idle: false))
        queue.awoke()
        queue.enqueue(command)
        #expect(takeSignal(queue) == nil)
    }
}

/// Stands in for an engine loop's inline turn: drains the queue like a turn
/// would (or fails, as when the engine thread holds the loop).
private final class DrainingTurn: InlineTurn {
    let queue: CommandQueue
    let succeeds: Bool
    let runs = Atomic<Int>(0)
    let drained = Atomic<Int>(0)
    let waits = Atomic<Int>(0)
    /// The transfer each of its turns reports starting.
    static let started = TransferID(serial: 2, shard: 0)

    init(queue: CommandQueue, succeeds: Bool = true) {
        self.queue = queue
        self.succeeds = succeeds
    }

    func run() -> Bool {
        runs.add(1, ordering: .relaxed)
        guard succeeds else { return false }
        var batch: [EngineCommand?] = []
        queue.drain(into: &batch)
        drained.add(batch.count, ordering: .relaxed)
        return queue.endInlineTurn(sole: Self.started)
    }

    func wait(for id: TransferID, limit: UInt64, until isDone: () -> Bool) -> InlineWait.End {
        waits.add(1, ordering: .relaxed)
        return .done
    }
}

private final class NoDelegate: TransferDelegate {
    func transferDidReceiveHead(_ head: consuming ResponseHead, of id: TransferID) {}
    func transferDidReceiveBody(_ bytes: UnsafeRawBufferPointer, of id: TransferID) -> BodyVerdict { .accepted }
    func transferDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64, of id: TransferID) {}
    func transferDidComplete(_ outcome: TransferOutcome, of id: TransferID) {}
}
