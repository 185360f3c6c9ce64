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
package enum EngineTurn {
    /// `pthread_self()` of the engine thread, 0 before it starts.
    private static let engineThread = Atomic<UInt>(0)
    /// Only the engine thread touches it; a lock because a global needs one to
    /// be Sendable, and an uncontended lock costs nanoseconds.
    private static let held = Mutex<[@Sendable () -> Void]>([])

    /// On the engine thread: runs `work` at the end of the current turn, in
    /// the order given. Anywhere else: runs it now.
    package static func atEnd(_ work: @escaping @Sendable () -> Void) {
        guard pthread_self() == engineThread.load(ordering: .relaxed) else {
            work()
            return
        }
        held.withLock { $0.append(work) }
    }

    /// Called once by the engine thread before its loop starts.
    static func markEngineThread() {
        engineThread.store(pthread_self(), ordering: .relaxed)
    }

    /// Whether work is held, so the engine does not block with some left.
    static var hasWork: Bool {
        held.withLock { !$0.isEmpty }
    }

    /// Engine thread, at the end of a turn. Work added meanwhile (a wake-up
    /// that leads to another) runs too, in bounded rounds; anything left after
    /// them keeps the next epoll_wait from blocking (`hasWork`).
    static func flush() {
        for _ in 0..<4 {
            var batch: [@Sendable () -> Void] = []
            held.withLock { swap(&$0, &batch) }
            if batch.isEmpty { return }
            for work in batch { work() }
        }
    }
}
