import Foundation

/// The body as text, as Apple's `URLSession.AsyncBytes` offers it (Foundation
/// on Linux has no `lines`, `characters` or `unicodeScalars` for async byte
/// sequences). Each reads the body chunk by chunk and hands out what a chunk
/// completes without suspending: one async wait per chunk, not per byte.
/// Invalid UTF-8 becomes U+FFFD. Leaving the loop early cancels the task, as
/// for the bytes.
extension AsyncBytes {
    /// The body's lines, as Apple's `AsyncLineSequence`: split at LF, CR,
    /// CR LF, NEL, U+2028 and U+2029, separators dropped, empty lines skipped.
    public var lines: Lines { Lines(task: task) }

    /// The body's characters (grapheme clusters), whole even when a chunk
    /// boundary falls inside one.
    public var characters: Characters { Characters(task: task) }

    /// The body's Unicode scalars.
    public var unicodeScalars: UnicodeScalars { UnicodeScalars(task: task) }

    public struct Lines: AsyncSequence, Sendable {
        public typealias Element = String
        let task: SessionTask

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(task: task) }

        public struct AsyncIterator: AsyncIteratorProtocol {
            private var chunks: BodyChunkIterator
            private var splitter = LineSplitter()
            private var ready = TextQueue<String>()
            private var ended = false

            init(task: SessionTask) { chunks = BodyChunkIterator(task: task) }

            public mutating func next() async throws -> String? {
                while true {
                    if let line = ready.next() { return line }
                    if ended { return nil }
                    if let data = try await chunks.next() {
                        ready.refill(splitter.feed(data))
                    } else {
                        ended = true
                        ready.refill(splitter.finish().map { [$0] } ?? [])
                    }
                }
            }
        }
    }

    public struct Characters: AsyncSequence, Sendable {
        public typealias Element = Character
        let task: SessionTask

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(task: task) }

        public struct AsyncIterator: AsyncIteratorProtocol {
            private var chunks: BodyChunkIterator
            private var decoder = UTF8ChunkDecoder()
            private var ready = TextQueue<Character>()
            /// The last character decoded: the next chunk may extend it (a
            /// combining mark, the second half of a flag), so it waits.
            private var carried = ""
            private var ended = false

            init(task: SessionTask) { chunks = BodyChunkIterator(task: task) }

            public mutating func next() async throws -> Character? {
                while true {
                    if let character = ready.next() { return character }
                    if ended { return nil }
                    if let data = try await chunks.next() {
                        var characters = Array(carried + decoder.decode(data))
                        carried = characters.popLast().map(String.init) ?? ""
                        ready.refill(characters)
                    } else {
                        ended = true
                        ready.refill(Array(carried + decoder.finish()))
                        carried = ""
                    }
                }
            }
        }
    }

    public struct UnicodeScalars: AsyncSequence, Sendable {
        public typealias Element = Unicode.Scalar
        let task: SessionTask

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(task: task) }

        public struct AsyncIterator: AsyncIteratorProtocol {
            private var chunks: BodyChunkIterator
            private var decoder = UTF8ChunkDecoder()
            private var ready = TextQueue<Unicode.Scalar>()
            private var ended = false

            init(task: SessionTask) { chunks = BodyChunkIterator(task: task) }

            public mutating func next() async throws -> Unicode.Scalar? {
                while true {
                    if let scalar = ready.next() { return scalar }
                    if ended { return nil }
                    if let data = try await chunks.next() {
                        ready.refill(Array(decoder.decode(data).unicodeScalars))
                    } else {
                        ended = true
                        ready.refill(Array(decoder.finish().unicodeScalars))
                    }
                }
            }
        }
    }
}

/// What one chunk completed, handed out one at a time.
struct TextQueue<Element> {
    private var items: [Element] = []
    private var index = 0

    mutating func next() -> Element? {
        guard index < items.count else { return nil }
        defer { index += 1 }
        return items[index]
    }

    mutating func refill(_ newItems: [Element]) {
        items = newItems
        index = 0
    }
}
