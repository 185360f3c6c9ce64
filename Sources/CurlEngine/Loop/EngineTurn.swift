import Glibc

/// Work that an engine thread holds until the end of its current loop turn.
///
/// Why: waking a parked consumer (resuming its continuation) wakes a worker
/// thread. Woken once per event while the turn still reads other sockets, a
/// worker often handled one event and went back to sleep before the next came,
/// a futex wake and wait each time; a consumer woken at the turn's end finds
/// the response, its body and the end queued together. The delay is at most
/// one turn, which never blocks.
///
/// Swift jobs of `EngineExecutor` wait here too: a consumer that prefers that
/// executor is resumed by the turn that finished its transfer, after every
/// socket of the turn was served.
///
/// Each engine thread has its own `State`, found through a pthread key, so
/// the threads never share held work or a lock.
package enum EngineTurn {
    /// One engine thread's held work and turn clock. Only that thread reads
    /// or writes it (it is reachable only through its own thread-specific
    /// value, and from its `EngineLoop`, which runs on that thread), so its
    /// `var`s skip run-time exclusivity checks (see `EngineLoop`).
    final class State {
        /// Which engine thread (shard) this is.
        let shard: Int
        @exclusivity(unchecked) fileprivate var work: [HeldWork] = []
        /// Held until the current `curl_multi_socket_action` returns (see `afterRead`).
        @exclusivity(unchecked) fileprivate var readWork: [HeldWork] = []
        /// What `flush` and `flushReads` are running now; empty between
        /// flushes, with the capacity of the last one.
        @exclusivity(unchecked) fileprivate var runningWork: [HeldWork] = []
        @exclusivity(unchecked) fileprivate var runningReadWork: [HeldWork] = []
        @exclusivity(unchecked) fileprivate var runningJobs: [UnownedJob] = []
        @exclusivity(unchecked) fileprivate var jobs: [UnownedJob] = []

        /// The monotonic time at the start of the current turn. libcurl calls
        /// our header callback once per header line; reading the clock in
        /// every callback (for the idle timeout) cost about 2% of a small
        /// request. The idle sweep runs at 4 Hz, so the time a turn started
        /// is precise enough for "last activity".
        @exclusivity(unchecked) var turnStart: UInt64 = 0

        /// True while the turn tells delegates of ended transfers
        /// (`EngineLoop.flushCompletions`): see `isFinishingTransfers`.
        @exclusivity(unchecked) var finishingTransfers = false

        init(shard: Int) {
            self.shard = shard
        }

        /// Whether work is held, so the engine does not block with some left.
        var hasWork: Bool { !work.isEmpty || !jobs.isEmpty || !readWork.isEmpty }
    }

    /// One piece of held work: a closure, or an object that knows what it
    /// asked for (no closure context to allocate, see `TurnWork`).
    fileprivate enum HeldWork {
        case closure(@Sendable () -> Void)
        case atEnd(any TurnWork)
        case afterRead(any TurnWork)

        func run() {
            switch self {
            case .closure(let work): work()
            case .atEnd(let object): object.runAtTurnEnd()
            case .afterRead(let object): object.runAfterRead()
            }
        }
    }

    /// Holds each engine thread's `State`; nil on every other thread.
    private static let key = ThreadSpecificKey.make()

    /// The calling engine thread's state, nil off the engine threads.
    static var current: State? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<State>.fromOpaque(raw).takeUnretainedValue()
    }

    /// On an engine thread: runs `work` at the end of its current turn, in
    /// the order given. Anywhere else: runs it now.
    package static func atEnd(_ work: @escaping @Sendable () -> Void) {
        guard let state = current else {
            work()
            return
        }
        state.work.append(.closure(work))
    }

    /// `atEnd` for an object: runs `object.runAtTurnEnd()`. Holding the
    /// object costs no allocation, where a closure that captures what it
    /// will run needs a context: one allocation on the engine thread and one
    /// free on another per wake-up of an events consumer.
    package static func atEnd(_ object: any TurnWork) {
        guard let state = current else {
            object.runAtTurnEnd()
            return
        }
        state.work.append(.atEnd(object))
    }

    /// On an engine thread: runs `object.runAfterRead()` once libcurl's
    /// current read is in (when the socket action that delivers it returns,
    /// or at the turn's end, whichever comes first). Anywhere else: runs it now.
    ///
    /// Why not at once or at the turn's end: libcurl hands one read to the
    /// write callback in 16 KiB pieces. Woken by the first piece, a fast
    /// consumer took it and parked again before the next: a futex wake per
    /// piece. Held to the turn's end, a consumer of a large body started
    /// only after every socket of the turn was read and the commands and
    /// timers had run: one 256 MiB GET through `task.events` made 1,623
    /// against 2,139 MB/s (medians of 7 alternating runs).
    package static func afterRead(_ object: any TurnWork) {
        guard let state = current else {
            object.runAfterRead()
            return
        }
        state.readWork.append(.afterRead(object))
    }

    /// Engine thread, after each socket action: runs what `afterRead` held.
    static func flushReads(_ state: State) {
        guard !state.readWork.isEmpty else { return }
        swap(&state.readWork, &state.runningReadWork)
        for item in state.runningReadWork { item.run() }
        state.runningReadWork.removeAll(keepingCapacity: true)
    }

    /// Whether the caller is an engine turn telling the delegates of the
    /// transfers that ended in it. Every socket of the turn has been read
    /// then, and the ended transfers are told one after the other, so a
    /// wake-up can run at once instead of being held by `atEnd`: it is
    /// batched with the others already, and holding it cost two allocations
    /// (the closure and its context) per ended transfer.
    package static var isFinishingTransfers: Bool { current?.finishingTransfers ?? false }

    /// Whether `atEnd` would hold work now: on an engine thread (or an
    /// inline turn) that is not telling ended transfers. Lets a caller
    /// decide under its own lock that its wake-up waits for the turn's end.
    package static var holdsWorkForTurnEnd: Bool {
        guard let state = current else { return false }
        return !state.finishingTransfers
    }

    /// Whether the caller is an engine thread (or an inline turn): where
    /// user code must never run.
    package static var isEngineThread: Bool { current != nil }

    /// Which engine thread the caller is, nil off the engine threads.
    static var currentShard: Int? { current?.shard }

    /// Engine thread: runs a Swift job of the engine's executor at the end of
    /// this turn.
    static func runAtEnd(_ job: UnownedJob, in state: State) {
        state.jobs.append(job)
    }

    /// Runs `body` with the calling thread standing in for the engine thread
    /// of `state` (an inline turn, see `InlineTurn`): what `atEnd` and
    /// `afterRead` hold is held for that turn.
    static func standingIn<Result>(for state: State, _ body: () -> Result) -> Result {
        pthread_setspecific(key, Unmanaged.passUnretained(state).toOpaque())
        defer { pthread_setspecific(key, nil) }
        return body()
    }

    /// Called once by each engine thread before its loop starts. The state
    /// stays retained for the thread's life, which is the process's.
    static func markEngineThread(_ state: State) {
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
    }

    /// Engine thread, at the end of a turn: wake-ups first, then the jobs
    /// they made ready. Work added meanwhile (a wake-up that leads to another,
    /// a job that resumes another task) runs too, in bounded rounds; anything
    /// left after them keeps the next epoll_wait from blocking (`hasWork`).
    /// Without an executor (an inline turn) jobs stay for the engine thread:
    /// code that prefers the engine's executor runs on an engine thread.
    static func flush(_ state: State, runningJobsOn executor: EngineExecutor?) {
        for _ in 0..<4 {
            if state.work.isEmpty && state.readWork.isEmpty && (executor == nil || state.jobs.isEmpty) { return }
            flushReads(state)
            // Swapped with spare arrays that keep their capacity: taking the
            // held arrays and leaving empty ones allocated new storage on the
            // next turn's first wake-up (about 1 in 40 of a small request's
            // allocations).
            swap(&state.work, &state.runningWork)
            if executor != nil { swap(&state.jobs, &state.runningJobs) }
            for item in state.runningWork { item.run() }
            for job in state.runningJobs { executor?.run(job) }
            state.runningWork.removeAll(keepingCapacity: true)
            state.runningJobs.removeAll(keepingCapacity: true)
        }
    }
}

/// An object whose held work `EngineTurn` runs without a closure: it keeps
/// what is to be done itself, and the turn calls it back (see
/// `EngineTurn.atEnd(_:)` and `EngineTurn.afterRead(_:)`).
package protocol TurnWork: AnyObject, Sendable {
    /// What `EngineTurn.atEnd(_:)` held, at the end of the turn.
    func runAtTurnEnd()
    /// What `EngineTurn.afterRead(_:)` held, once the current read is in.
    func runAfterRead()
}
