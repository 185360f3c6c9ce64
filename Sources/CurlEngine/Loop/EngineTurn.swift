import Glibc
import Synchronization

/// Work that the engine thread holds until the end of its current loop turn.
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
package enum EngineTurn {
    /// `pthread_self()` of the engine thread, 0 before it starts.
    private static let engineThread = Atomic<UInt>(0)

    private struct Held {
        var work: [@Sendable () -> Void] = []
        var jobs: [UnownedJob] = []
        var isEmpty: Bool { work.isEmpty && jobs.isEmpty }
    }

    /// Only the engine thread touches it; a lock because a global needs one to
    /// be Sendable, and an uncontended lock costs nanoseconds.
    private static let held = Mutex(Held())

    /// On the engine thread: runs `work` at the end of the current turn, in
    /// the order given. Anywhere else: runs it now.
    package static func atEnd(_ work: @escaping @Sendable () -> Void) {
        guard isEngineThread else {
            work()
            return
        }
        held.withLock { $0.work.append(work) }
    }

    /// Whether the caller runs on the engine thread.
    package static var isEngineThread: Bool {
        pthread_self() == engineThread.load(ordering: .relaxed)
    }

    /// Engine thread: runs a Swift job of the engine's executor at the end of
    /// this turn.
    static func runAtEnd(_ job: UnownedJob) {
        held.withLock { $0.jobs.append(job) }
    }

    /// Called once by the engine thread before its loop starts.
    static func markEngineThread() {
        engineThread.store(pthread_self(), ordering: .relaxed)
    }

    /// Whether work is held, so the engine does not block with some left.
    static var hasWork: Bool {
        held.withLock { !$0.isEmpty }
    }

    /// Engine thread, at the end of a turn: wake-ups first, then the jobs
    /// they made ready. Work added meanwhile (a wake-up that leads to another,
    /// a job that resumes another task) runs too, in bounded rounds; anything
    /// left after them keeps the next epoll_wait from blocking (`hasWork`).
    static func flush(runningJobsOn executor: EngineExecutor) {
        for _ in 0..<4 {
            var batch = Held()
            held.withLock { swap(&$0, &batch) }
            if batch.isEmpty { return }
            for work in batch.work { work() }
            for job in batch.jobs { executor.run(job) }
        }
    }
}
