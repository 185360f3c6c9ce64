import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response body as an asynchronous sequence of bytes, as
/// `URLSession.AsyncBytes`. Iterate it once. `lines`, `characters` and
/// `unicodeScalars` read it as text, as on Apple's platforms.
public struct AsyncBytes: AsyncSequence, Sendable {
    public typealias Element = UInt8
    public typealias Failure = any Error

    /// The task that produces the bytes (for its response, metrics, cancel()).
    public let task: SessionTask

    /// The body of `task` as bytes: the `data` events it yields from now on
    /// (others are skipped, their decisions take their defaults). For a task
    /// whose events you consumed up to its `response`, as `bytes(for:)` does.
    public init(task: SessionTask) {
        self.task = task
    }

    /// An iterator dropped before the body's end cancels the task (as
    /// Apple's): a `break` out of `for try await` frees the connection.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(task: task)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        private var chunks: BodyChunkIterator
        private var chunk = Data()
        private var index = 0

        init(task: SessionTask) {
            chunks = BodyChunkIterator(task: task)
        }

        /// A byte of the chunk at hand is returned without suspending; only
        /// the first byte of each chunk waits for the task.
        public mutating func next() async throws -> UInt8? {
            if index < chunk.count {
                defer { index += 1 }
                return chunk[chunk.startIndex + index]
            }
            guard let data = try await chunks.next() else { return nil }
            chunk = data
            index = 1
            return data[data.startIndex]
        }
    }
}
