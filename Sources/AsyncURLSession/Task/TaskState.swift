/// A task's state, as `URLSessionTask.State`.
public enum TaskState: Sendable, Equatable {
    case running
    case suspended
    case canceling
    case completed
}

/// What kind of task it is, as URLSession's task classes.
public enum TaskKind: Sendable, Equatable {
    case data
    /// A data task whose body comes from data, a file or a stream.
    case upload
    /// The body goes to a file.
    case download
}
