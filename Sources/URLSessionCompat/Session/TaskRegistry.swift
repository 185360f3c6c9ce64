/// A session's tasks and its invalidation, as a value with explicit
/// transitions: tasks are taken while active; once invalidated, the delegate
/// hears `didBecomeInvalidWithError` after the last task's completion.
struct TaskRegistry<Task> {
    enum Phase: Equatable {
        case active
        /// No new tasks; waiting for the live ones to complete.
        case invalidating
        /// `didBecomeInvalidWithError` is due or done; the delegate is let go.
        case invalidated
    }

    private(set) var phase: Phase = .active
    private(set) var tasks: [Int: Task] = [:]
    private var nextIdentifier = 1

    /// What the caller must do after a transition.
    enum Action: Equatable {
        case none
        /// Deliver `didBecomeInvalidWithError(nil)`, then release the delegate.
        case reportInvalidation
    }

    /// A fresh identifier, also for tasks a refused session hands out.
    mutating func makeIdentifier() -> Int {
        defer { nextIdentifier += 1 }
        return nextIdentifier
    }

    /// Later identifiers come after `identifier` (a background task an
    /// earlier program made keeps its own).
    mutating func reserve(_ identifier: Int) {
        nextIdentifier = max(nextIdentifier, identifier + 1)
    }

    /// Adds a task; false when the session no longer takes tasks.
    mutating func add(_ task: Task, identifier: Int) -> Bool {
        guard phase == .active else { return false }
        tasks[identifier] = task
        return true
    }

    /// Replaces one task by another (a data task that became a download).
    mutating func replace(_ identifier: Int, with task: Task, identifier newIdentifier: Int) {
        tasks[identifier] = nil
        tasks[newIdentifier] = task
    }

    /// The task's completion was delivered.
    mutating func remove(_ identifier: Int) -> Action {
        guard tasks.removeValue(forKey: identifier) != nil else { return .none }
        return settleIfIdle()
    }

    /// `finishTasksAndInvalidate` or `invalidateAndCancel`.
    mutating func invalidate() -> Action {
        guard phase == .active else { return .none }
        phase = .invalidating
        return settleIfIdle()
    }

    private mutating func settleIfIdle() -> Action {
        guard phase == .invalidating, tasks.isEmpty else { return .none }
        phase = .invalidated
        return .reportInvalidation
    }
}
