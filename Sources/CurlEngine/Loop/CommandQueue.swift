internal import CCurl
import Glibc
import Synchronization

/// A multi-producer, single-consumer queue of engine commands with an eventfd
/// to wake the engine thread.
///
/// Why the eventfd is written only while the engine is about to block in
/// epoll_wait: an awake engine drains the queue at the end of its turn anyway,
/// so a write (and the engine's read to reset the counter) would be two
/// syscalls for nothing. A burst of commands costs at most one write.
///
/// A transfer started while the engine sleeps with nothing in flight is run
/// by the caller instead (`InlineTurn`): no wake-up at all.
final class CommandQueue: Sendable {
    let eventFD: Int32

    private struct State {
        /// Optional so that the engine can take each command out by moving
        /// it (`take()`), not copying it (see `EngineLoop.runCommands`).
        var queue: [EngineCommand?] = []
        /// The engine checked the queue empty and will block: the next
        /// producer must write the eventfd.
        var engineSleeping = false
        /// The eventfd was written and not yet read.
        var signaled = false
        /// The engine thread is between `prepareToSleep` and `awoke`.
        var inEpoll = false
        /// It went to sleep with no transfer in flight.
        var sleepsIdle = false
        /// Runs a turn on the caller's thread; set once the loop exists.
        var inlineTurn: (any InlineTurn)?
    }

    private let state = Mutex(State())
    /// The transfer an inline turn started while the engine thread slept
    /// with nothing in flight, as long as that thread sleeps on (its raw
    /// value; 0 otherwise): the transfer a latency-bound caller may wait for
    /// inline. Written under the lock, read without it: `waitInline` refuses
    /// everything else with one atomic load (the wait checks again under the
    /// loop's lock). Not a transfer the engine thread started itself: with
    /// many in flight, it sometimes goes to sleep with a single one left,
    /// which is no sign of a caller waiting for one request at a time.
    private let soleTransferHint = Atomic<UInt64>(0)
    /// Inline turns that ran instead of a wake-up (read by tests).
    let inlineTurnsRun = Atomic<Int>(0)

    init() {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        precondition(fd >= 0, "eventfd failed: errno \(errno)")
        eventFD = fd
    }

    /// Takes the command (moved into the queue, not copied: a start command
    /// holds a whole TransferRequest, and a copy retained each of its fields).
    func enqueue(_ command: consuming EngineCommand) {
        // Only a start is run inline: it is what a latency-bound caller waits
        // on. Not from an engine thread (nor from inside an inline turn),
        // whose turn drains the queue anyway.
        let mayRunInline = command.isStart && EngineTurn.current == nil
        var pending = Optional(command)
        let (wake, inline) = state.withLock { state -> (Bool, (any InlineTurn)?) in
            state.queue.append(pending.take())
            guard state.engineSleeping else { return (false, nil) }
            // One write (or one inline turn) serves it; later producers see it awake.
            state.engineSleeping = false
            soleTransferHint.store(0, ordering: .relaxed)
            if mayRunInline, state.sleepsIdle, let inline = state.inlineTurn { return (false, inline) }
            state.signaled = true
            return (true, nil)
        }
        if let inline {
            if inline.run() {
                inlineTurnsRun.add(1, ordering: .relaxed)
                return
            }
            // The engine thread is busy, or the turn left work for it.
            state.withLock { $0.signaled = true }
            signal()
        } else if wake {
            signal()
        }
    }

    /// A caller about to park on transfer `id` waits for it on its own
    /// thread instead, while the engine thread sleeps with nothing queued
    /// (see `InlineWait`), for at most `limit` ns.
    @discardableResult
    func waitInline(for id: TransferID, limit: UInt64, until isDone: () -> Bool) -> InlineWait.End {
        guard mayWaitInline(for: id) else { return .notStarted }
        let inline = state.withLock { state -> (any InlineTurn)? in
            guard state.engineSleeping, state.inEpoll, state.queue.isEmpty else { return nil }
            return state.inlineTurn
        }
        return inline?.wait(for: id, limit: limit, until: isDone) ?? .notStarted
    }

    /// Whether `id` was started by an inline turn and the engine thread has
    /// slept on since (the lock-free hint; see `soleTransferHint`).
    func mayWaitInline(for id: TransferID) -> Bool {
        soleTransferHint.load(ordering: .relaxed) == id.rawValue
    }

    /// After an inline wait: whether the engine thread, asleep through it,
    /// now sleeps with nothing in flight (the next start may then be an
    /// inline turn again).
    func sleepsOn(idle: Bool) {
        state.withLock { state in
            soleTransferHint.store(0, ordering: .relaxed)
            guard state.engineSleeping, state.inEpoll else { return }
            state.sleepsIdle = idle
        }
    }

    /// Wakes the engine thread if it sleeps: work was left for it.
    func wakeSleepingEngine() {
        let wake = state.withLock { state -> Bool in
            guard state.engineSleeping else { return false }
            state.engineSleeping = false
            state.signaled = true
            soleTransferHint.store(0, ordering: .relaxed)
            return true
        }
        if wake { signal() }
    }

    private func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(eventFD, $0.baseAddress, 8) }
    }

    /// Engine thread, once: lets callers run turns of `inlineTurn`.
    func install(_ inlineTurn: any InlineTurn) {
        state.withLock { $0.inlineTurn = inlineTurn }
    }

    /// Engine thread, before blocking in epoll_wait: false when commands are
    /// waiting (then it must not block). Checked under the same lock that
    /// producers append under, so no command can slip in unseen. `idle`: no
    /// transfer is in flight on this thread.
    func prepareToSleep(idle: Bool) -> Bool {
        state.withLock { state in
            guard state.queue.isEmpty else { return false }
            state.engineSleeping = true
            state.inEpoll = true
            state.sleepsIdle = idle
            return true
        }
    }

    /// Whether the engine thread sleeps with nothing in flight (for tests).
    var sleepsIdle: Bool { state.withLock { $0.engineSleeping && $0.sleepsIdle } }

    /// Engine thread, after epoll_wait returned.
    func awoke() {
        state.withLock { noteAwake(&$0) }
    }

    /// Engine thread, after a blocking epoll_wait returned: `awoke()` and
    /// `drain(into:)` under one acquisition. Commands that come while the
    /// woken turn runs are drained by the next turn (the queue is not
    /// empty, so the engine does not block before it).
    func awoke(draining batch: inout [EngineCommand?]) {
        let signaled = state.withLock { state -> Bool in
            noteAwake(&state)
            return Self.take(&state, into: &batch)
        }
        if signaled { resetEventFD() }
    }

    private func noteAwake(_ state: inout State) {
        state.engineSleeping = false
        state.inEpoll = false
        soleTransferHint.store(0, ordering: .relaxed)
    }

    /// At the end of an inline turn: true when the engine thread still
    /// sleeps and nothing is queued for it, so it may sleep on (producers
    /// then see it asleep again). No transfer is idle any more; `sole`: the
    /// transfer the turn started, when it is the only one in flight.
    func endInlineTurn(sole: TransferID? = nil) -> Bool {
        state.withLock { state in
            guard state.queue.isEmpty, state.inEpoll else { return false }
            state.engineSleeping = true
            state.sleepsIdle = false
            soleTransferHint.store(sole?.rawValue ?? 0, ordering: .relaxed)
            return true
        }
    }

    /// Takes every queued command. Called on the engine thread only.
    func drain(into batch: inout [EngineCommand?]) {
        if state.withLock({ Self.take(&$0, into: &batch) }) { resetEventFD() }
    }

    /// Moves the queue into `batch`; whether the eventfd was written.
    private static func take(_ state: inout State, into batch: inout [EngineCommand?]) -> Bool {
        swap(&state.queue, &batch)
        defer { state.signaled = false }
        return state.signaled
    }

    private func resetEventFD() {
        var counter: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &counter) { read(eventFD, $0.baseAddress, 8) }
    }
}
