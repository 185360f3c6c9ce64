internal import CurlEngine

extension Session {
    /// The executor of the I/O thread that runs every session's transfers.
    ///
    /// Code run under `withTaskExecutorPreference(Session.ioExecutor) { ... }`
    /// is resumed on that thread when its transfer ends, and starts its next
    /// request there, with no hand-off between threads: the lowest latency per
    /// request, as on a SwiftNIO event loop. The same rule applies as there:
    /// such code must never block (no `sleep`, no semaphore, no synchronous
    /// file or lock waits), because while it runs no transfer moves.
    public nonisolated static var ioExecutor: any TaskExecutor {
        CurlEngine.shared.executor
    }
}
