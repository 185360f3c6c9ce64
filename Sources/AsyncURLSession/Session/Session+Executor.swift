internal import CurlEngine

extension Session {
    /// The executor of the I/O threads that run every session's transfers.
    ///
    /// Code run under `withTaskExecutorPreference(Session.ioExecutor) { ... }`
    /// is resumed on the I/O thread that ran its transfer when that transfer
    /// ends, and starts its next request there, with no hand-off between
    /// threads: the lowest latency per request, as on a SwiftNIO event loop.
    /// The same rule applies as there: such code must never block (no
    /// `sleep`, no semaphore, no synchronous file or lock waits), because
    /// while it runs no transfer of that thread moves.
    public nonisolated static var ioExecutor: any TaskExecutor {
        CurlEngine.shared.executor
    }

    /// How many I/O threads run transfers: one per available core, at most
    /// four, or `ASYNCURLSESSION_ENGINE_THREADS` (1 to 8) when that is set in
    /// the environment before the first session is made.
    public nonisolated static var ioThreadCount: Int {
        CurlEngine.shared.threadCount
    }
}
