/// A task's state, as `URLSessionTask.State`.
public enum TaskState: Sendable, Equatable {
    case running
    case suspended
    case canceling
    case completed
}
