import Synchronization

/// Runs Swift jobs on the engine threads, at the end of their loops' turns.
///
/// Why: a consumer parked on the default executor is resumed by waking a
/// worker thread, and its next request wakes the engine again; with one
/// request in flight those two hand-offs between threads cost about as much
/// as libcurl's whole exchange. Code that prefers this executor
/// (`withTaskExecutorPreference`) resumes on the engine thread in the turn
/// that finished its transfer, and its next request starts in the next turn,
/// with nothing to wake. The price: while such code runs, no socket is
/// served, so it must never block (the rule of a SwiftNIO event loop).
///
/// With several engine threads, a job enqueued on one of them runs on that
/// same thread, where its transfer ran (and where its next one will be
/// placed); a job from elsewhere goes to the threads in turn. A task runs one
/// job at a time, so it never runs on two threads at once.
package final class EngineExecutor: TaskExecutor {
    private let shards: [EngineShard]
    private let nextShard = Atomic<UInt>(0)

    init(shards: [EngineShard]) {
        self.shards = shards
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if let turn = EngineTurn.current {
            // This engine thread is awake: the end of its turn comes soon, no wake-up needed.
            EngineTurn.runAtEnd(job, in: turn)
        } else {
            let index = Int(nextShard.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(shards.count))
            shards[index].commands.enqueue(.runJob(job))
        }
    }

    /// Engine thread only.
    func run(_ job: UnownedJob) {
        job.runSynchronously(on: asUnownedTaskExecutor())
    }
}
