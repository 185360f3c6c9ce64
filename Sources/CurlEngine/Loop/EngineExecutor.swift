/// Runs Swift jobs on the engine thread, at the end of its loop's turns.
///
/// Why: a consumer parked on the default executor is resumed by waking a
/// worker thread, and its next request wakes the engine again; with one
/// request in flight those two hand-offs between threads cost about as much
/// as libcurl's whole exchange. Code that prefers this executor
/// (`withTaskExecutorPreference`) resumes on the engine thread in the turn
/// that finished its transfer, and its next request starts in the next turn,
/// with nothing to wake. The price: while such code runs, no socket is
/// served, so it must never block (the rule of a SwiftNIO event loop).
package final class EngineExecutor: TaskExecutor {
    private let commands: CommandQueue

    init(commands: CommandQueue) {
        self.commands = commands
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if EngineTurn.isEngineThread {
            // The engine is awake: the end of this turn comes soon, no wake-up needed.
            EngineTurn.runAtEnd(job)
        } else {
            commands.enqueue(.runJob(job))
        }
    }

    /// Engine thread only.
    func run(_ job: UnownedJob) {
        job.runSynchronously(on: asUnownedTaskExecutor())
    }
}
