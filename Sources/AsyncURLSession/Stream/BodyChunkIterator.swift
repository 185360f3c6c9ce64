import Foundation

/// Pulls a task's body as the chunks it arrives in: the `data` events from
/// now on (others skipped, their decisions taking their defaults). What
/// `AsyncBytes` and its `lines`, `characters` and `unicodeScalars` read, so
/// that none of them makes an async call per byte.
///
/// Dropped before the body's end (a `break` out of the loop over any of
/// them), it cancels the task, as Apple's `AsyncBytes` does.
struct BodyChunkIterator {
    let task: SessionTask
    private let watch: IterationWatch

    init(task: SessionTask) {
        self.task = task
        watch = IterationWatch(task: task)
    }

    /// The next non-empty chunk, or nil at the body's end.
    mutating func next() async throws -> Data? {
        while let event = try await task.core.nextEvent() {
            if case .data(let data) = event, !data.isEmpty { return data }
        }
        return nil
    }
}
