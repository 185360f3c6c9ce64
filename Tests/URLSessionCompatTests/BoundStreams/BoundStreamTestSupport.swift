#if canImport(FoundationNetworking)
@testable import URLSessionCompat
import Foundation
import Synchronization
import Testing

// Helpers of the bound stream tests: threads for the blocking calls (never
// the cooperative pool), values awaited once, and a pair that can cross to
// those threads. Their time limit is the suite's `withTimeLimit`.

/// Runs `body` on a thread of its own, where it may block, and returns its result.
func onThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        // Named from inside: on Linux a name set before `start()` is lost.
        let thread = Thread {
            Thread.current.name = name
            continuation.resume(returning: body())
        }
        thread.start()
    }
}

/// A value given once (later gives are ignored) and awaited by the test.
final class OneShot<T: Sendable>: Sendable {
    private let state = Mutex<(value: T?, waiters: [CheckedContinuation<T, Never>])>((nil, []))

    func give(_ value: T) {
        let waiters = state.withLock { state -> [CheckedContinuation<T, Never>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    var value: T {
        get async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> T? in
                    if let value = state.value { return value }
                    state.waiters.append(continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        }
    }
}

/// Both ends of a bound pair, to hand to the threads of a test.
///
/// `@unchecked Sendable`: InputStream and OutputStream are not Sendable, but
/// the bound ones keep all their state behind the pair's lock, and each test
/// uses one end from one thread at a time (or only the thread-safe calls,
/// such as `close()`, from another).
struct BoundPair: @unchecked Sendable {
    let input: InputStream
    let output: OutputStream

    init(bufferSize: Int) throws {
        var input: InputStream?
        var output: OutputStream?
        Stream.getBoundStreams(withBufferSize: bufferSize, inputStream: &input, outputStream: &output)
        self.input = try #require(input)
        self.output = try #require(output)
    }

    /// The shared buffer, to look at how many bytes it holds and who waits.
    var buffer: BoundStreamBuffer? { (input as? BoundInputStream)?.buffer }
}

/// Bytes that differ from one offset to the next, so a lost, doubled or
/// reordered chunk shows.
func testPattern(count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
}

/// Writes all of `bytes` with blocking writes in chunks of the given sizes
/// (in turn), then closes. Returns the bytes written, or nil at a failed write.
func writeAll(_ bytes: [UInt8], to output: OutputStream, chunks: [Int]) -> Int? {
    output.open()
    defer { output.close() }
    var offset = 0
    var turn = 0
    while offset < bytes.count {
        let length = min(chunks[turn % chunks.count], bytes.count - offset)
        turn += 1
        let written = bytes.withUnsafeBufferPointer { all in
            output.write(all.baseAddress! + offset, maxLength: length)
        }
        guard written > 0 else { return nil }
        offset += written
    }
    return offset
}

/// What a blocking reader got: the bytes, the last `read` result, the status after.
struct ReadOutcome: Sendable {
    var bytes: [UInt8] = []
    var last = 0
    var status = Stream.Status.notOpen
}

/// Reads with blocking reads until `read` returns 0 or -1.
func readAll(from input: InputStream, chunk: Int = 1000) -> ReadOutcome {
    input.open()
    var outcome = ReadOutcome()
    var buffer = [UInt8](repeating: 0, count: chunk)
    while true {
        let count = input.read(&buffer, maxLength: buffer.count)
        outcome.last = count
        guard count > 0 else { break }
        outcome.bytes += buffer[0..<count]
    }
    outcome.status = input.streamStatus
    return outcome
}

/// Records a stream's events, and calls `onEvent` with each.
///
/// `@unchecked Sendable`: `log` is behind a Mutex and `onEvent` is a Sendable
/// `let`; nothing else is stored.
final class EventRecorder: NSObject, StreamDelegate, @unchecked Sendable {
    private let log = Mutex<[Stream.Event]>([])
    private let onEvent: @Sendable (Stream, Stream.Event) -> Void

    init(onEvent: @escaping @Sendable (Stream, Stream.Event) -> Void = { _, _ in }) {
        self.onEvent = onEvent
    }

    var events: [Stream.Event] { log.withLock { $0 } }

    func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
        log.withLock { $0.append(eventCode) }
        onEvent(aStream, eventCode)
    }
}

/// An event's name, for failure messages.
func eventName(_ event: Stream.Event) -> String {
    switch event {
    case .openCompleted: "openCompleted"
    case .hasBytesAvailable: "hasBytesAvailable"
    case .hasSpaceAvailable: "hasSpaceAvailable"
    case .errorOccurred: "errorOccurred"
    case .endEncountered: "endEncountered"
    default: "Event(\(event.rawValue))"
    }
}
#endif
