import Foundation

extension AsyncBytes {
    /// The body as the chunks it arrives in (each a non-empty `Data`), for
    /// code that moves buffers rather than bytes (an OpenAPI transport, a
    /// file writer). Iterate it, or the bytes, once.
    public var chunks: Chunks { Chunks(task: task) }

    public struct Chunks: AsyncSequence, Sendable {
        public typealias Element = Data
        public typealias Failure = any Error

        let task: SessionTask

        /// An iterator dropped before the body's end cancels the task.
        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(task: task) }

        public struct AsyncIterator: AsyncIteratorProtocol {
            private var chunks: BodyChunkIterator

            init(task: SessionTask) {
                chunks = BodyChunkIterator(task: task)
            }

            public mutating func next() async throws -> Data? {
                try await chunks.next()
            }
        }
    }
}
