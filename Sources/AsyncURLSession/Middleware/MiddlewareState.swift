/// A task's part of its middleware: the layers set on the task, the
/// attempts counted for `MiddlewareAttempt.number`, and the Swift task a
/// middleware runs in while the task waits for it (cancelled with the
/// task). Owned by the task's guarded state.
struct MiddlewareState {
    /// `SessionTask.middleware`: inside the session's.
    var taskLayers: [any RequestMiddleware] = []
    private(set) var attempts = 0
    private(set) var retriesAsked = 0
    private var waiting: Task<Void, Never>?

    /// How many times a middleware may ask for another attempt in one
    /// task: a refresh that never succeeds must not loop for ever.
    static let maximumRetries = 16

    /// An attempt's request is about to be prepared: its number.
    mutating func attemptStarts() -> Int {
        attempts += 1
        return attempts
    }

    /// The number of the attempt whose response is inspected.
    var currentAttempt: Int { max(attempts, 1) }

    /// A middleware asked for another attempt: false when it asked too often.
    mutating func retryAsked() -> Bool {
        retriesAsked += 1
        return retriesAsked <= Self.maximumRetries
    }

    /// The task waits for a middleware running in `task`.
    mutating func waits(on task: Task<Void, Never>) {
        waiting = task
    }

    /// The middleware answered (or the task ended): nothing to cancel.
    mutating func stoppedWaiting() {
        waiting = nil
    }

    /// The Swift task to cancel when the task is cancelled.
    mutating func takeWaiting() -> Task<Void, Never>? {
        defer { waiting = nil }
        return waiting
    }
}
