import Foundation
import Glibc
import Synchronization

/// Runs one task's delegate calls on the session's `OperationQueue`, one
/// after the other in the order they were added, even on a concurrent queue.
///
/// How: the calls wait in this lane's own first-in-first-out list, and at
/// most one operation of the lane is on the queue at a time; it runs the
/// calls it finds, in order. Why not one operation per call chained with
/// `addDependency`: corelibs' OperationQueue can lose a dependency added
/// while the operation it depends on is finishing. The dependent operation
/// then never runs. A 256 MiB body received through `didReceiveData` hung
/// that way in about one run in three once calls were posted faster. Each
/// operation also cost tens of µs of OperationQueue scheduling and KVO: a
/// quarter of that body's CPU when every 64 KiB chunk had its own.
///
/// Calls that answer nothing and carry body bytes (`didReceiveData`,
/// progress) may be posted without waiting, up to `postedByteLimit` bytes in
/// flight: the driver pulls the next chunk while the delegate handles this
/// one. Past the limit the driver waits, so a slow delegate still slows its
/// transfer. The limit is the delegate queue's share of the task's stream
/// buffer (`StreamBufferSplit`).
///
/// A lane is also the executor its task's driver runs on (a `TaskExecutor`:
/// each of the driver's jobs is a call of the lane). The driver's own calls
/// then run at once, on the thread that runs its job, instead of being
/// queued for another operation: one hand-off per event (engine thread to
/// delegate queue) instead of two (to a worker thread, then to the queue).
/// A 256 MiB body through `didReceiveData`: 9,410 to 1,976 context switches,
/// 241 to 181 ms of CPU, and 1,337 to 1,643 MB/s (medians of 7 alternating
/// runs; the hand-offs that remain are the engine's, as for `task.events`).
final class DelegateQueue: TaskExecutor, Sendable {
    let queue: OperationQueue
    let postedByteLimit: Int
    /// Calls one operation runs before it hands the queue to others' work
    /// (a new operation of this lane continues after them).
    static let callsPerOperation = 64
    private let state = Mutex(State())
    /// Run by the lane's operation when it runs out of calls, before it
    /// ends (see `waitBeforeIdling`). Outside `state`: it is set only from a
    /// call of this lane (`isRunningHere`) and read only by the operation
    /// running those calls, one operation of the lane at a time, each
    /// started after the previous one ended (the queue orders them), so its
    /// accesses never overlap. In `state` it cost one more acquisition per
    /// request of a completion-handler chain.
    nonisolated(unsafe) private var pendingIdleWait: (@Sendable () -> Void)?

    private struct State {
        /// Calls not yet started, oldest first (from `head` on).
        var calls: [@Sendable () -> Void] = []
        var head = 0
        /// An operation of this lane is on the queue or running: it will run
        /// every call added before it finds the list empty.
        var operationScheduled = false
        var postedBytes = 0

        var isEmpty: Bool { head == calls.count }

        /// Up to `max` of the oldest calls, taken out of the list (which
        /// keeps its capacity for the next ones).
        mutating func takeBatch(max: Int) -> [@Sendable () -> Void] {
            let end = min(calls.count, head + max)
            let batch = Array(calls[head..<end])
            head = end
            if head == calls.count {
                calls.removeAll(keepingCapacity: true)
                head = 0
            }
            return batch
        }
    }

    init(queue: OperationQueue, postedByteLimit: Int) {
        self.queue = queue
        self.postedByteLimit = max(1, postedByteLimit)
    }

    /// Holds the lane whose calls the current thread is running, if any.
    private static let runningLaneKey: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key, nil)
        precondition(created == 0, "pthread_key_create failed: \(created)")
        return key
    }()

    /// Whether the calling code runs as one of this lane's calls (the
    /// driver's job): a call it adds would come right after it anyway.
    private var isRunningHere: Bool {
        pthread_getspecific(Self.runningLaneKey) == Unmanaged.passUnretained(self).toOpaque()
    }

    /// The driver's jobs: each runs as a call of the lane.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        append { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// Adds `call` after every call added before it.
    private func append(_ call: @escaping @Sendable () -> Void) {
        let schedule = state.withLock { state -> Bool in
            state.calls.append(call)
            guard !state.operationScheduled else { return false }
            state.operationScheduled = true
            return true
        }
        if schedule { scheduleOperation() }
    }

    private func scheduleOperation() {
        queue.addOperation { [self] in runCalls() }
    }

    /// The lane's operation: runs the waiting calls in order, including any
    /// added meanwhile, and unschedules itself when none are left. After
    /// `callsPerOperation` calls it hands over to a new operation of the
    /// lane, so other work on the queue is not held back by one busy task.
    private func runCalls() {
        let outer = pthread_getspecific(Self.runningLaneKey)
        pthread_setspecific(Self.runningLaneKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(Self.runningLaneKey, outer) }
        var ran = 0
        while ran < Self.callsPerOperation {
            let wait = pendingIdleWait
            let (batch, idleWait) = state.withLock { state -> ([@Sendable () -> Void], (@Sendable () -> Void)?) in
                if state.isEmpty {
                    // Still scheduled while it waits: what the wait posts
                    // joins this operation.
                    if let wait { return ([], wait) }
                    state.operationScheduled = false
                    return ([], nil)
                }
                return (state.takeBatch(max: Self.callsPerOperation - ran), nil)
            }
            if let idleWait {
                pendingIdleWait = nil
                idleWait()
                continue
            }
            if batch.isEmpty { return }
            for call in batch { call() }
            ran += batch.count
        }
        // Still scheduled: the successor runs what is left, or finds nothing
        // and unschedules.
        scheduleOperation()
    }

    /// From a call of this lane: once the lane has run out of calls, its
    /// operation runs `wait` before it ends, and then the calls `wait`
    /// posted. Elsewhere: nothing. For a completion handler that starts the
    /// next request (`URLSession.startDriver`): `wait` waits a bounded time
    /// for that request on this thread, and its handler then runs in this
    /// operation instead of a new one woken for it. The latest wait replaces
    /// an earlier one not yet run.
    func waitBeforeIdling(_ wait: @escaping @Sendable () -> Void) {
        guard isRunningHere else { return }
        pendingIdleWait = wait
    }

    /// Runs `body` in order; returns at once. Always queued, even from a
    /// call of this lane: the completion-handler lane posts from the engine
    /// (or from an inline turn inside a handler that starts a task), and a
    /// handler must not run nested in another.
    func post(_ body: @escaping @Sendable () -> Void) {
        append(body)
    }

    /// Runs `body` in order and returns once it has run.
    func run(_ body: @escaping @Sendable () -> Void) async {
        if isRunningHere { return body() }
        let slot = AnswerSlot<Void>()
        append {
            body()
            slot.fill(())
        }
        _ = await slot.wait()
    }

    /// Runs `body` in order; returns at once while fewer than
    /// `postedByteLimit` posted bytes wait, else once it has run.
    func post(bytes: Int, _ body: @escaping @Sendable () -> Void) async {
        if isRunningHere { return body() }
        let mustWait = state.withLock { state -> Bool in
            state.postedBytes += bytes
            return state.postedBytes > postedByteLimit
        }
        let slot = AnswerSlot<Void>()
        append { [self] in
            body()
            state.withLock { $0.postedBytes -= bytes }
            slot.fill(())
        }
        if mustWait { _ = await slot.wait() }
    }

    /// Runs `body` in order; `body` answers through the handler it is given
    /// (now or later, from any thread). Returns the answer, or nil when
    /// `abandon` fired first (the task was cancelled).
    func ask<Answer: Sendable>(
        registeringWith register: (AnswerSlot<Answer>) -> Void,
        _ body: @escaping @Sendable (_ answer: @escaping @Sendable (Answer) -> Void) -> Void
    ) async -> Answer? {
        let slot = AnswerSlot<Answer>()
        register(slot)
        if isRunningHere {
            body { slot.fill($0) }
        } else {
            append { body { slot.fill($0) } }
        }
        return await slot.wait()
    }
}
