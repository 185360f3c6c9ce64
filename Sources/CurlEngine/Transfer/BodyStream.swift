import Foundation
import Synchronization

/// A request body produced while it is sent: a Swift task (reading an
/// AsyncSequence) or a pump thread (reading an InputStream) writes chunks, and
/// the engine's read callback takes bytes. Bounded both ways: a producer
/// ahead by `capacity` bytes waits; an engine that finds nothing pauses the
/// upload (CURL_READFUNC_PAUSE) until the producer writes again.
package final class BodyStream: Sendable {
    package let capacity: Int
    /// The body ends with trailer fields (`finish(trailers:)`): it is sent
    /// chunked over HTTP/1.1, the only way libcurl 7.88.1 sends them.
    package let sendsTrailers: Bool
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var chunks: [Data] = []
        var head = 0
        var offsetInHead = 0
        var buffered = 0
        var finished = false
        var failure: URLError?
        /// The engine paused this transfer's upload waiting for bytes.
        var engineWaiting: (TransferID, EngineSessionID)?
        var producerWaiters: [CheckedContinuation<Void, Never>] = []
        var blockingProducerWaiting = false
        var cancelled = false
        /// A local hop's reader (`nextChunk`) waiting for bytes.
        var localReader: CheckedContinuation<Void, Never>?
        /// The fields sent after the body (`sendsTrailers`).
        var trailers: [(name: String, value: String)] = []
        /// Stops the producer when the transfer no longer wants bytes.
        var onCancel: (@Sendable () -> Void)?
    }

    private let blockingSpace = DispatchSemaphore(value: 0)

    package init(capacity: Int = 1 << 20, sendsTrailers: Bool = false) {
        self.capacity = max(1, capacity)
        self.sendsTrailers = sendsTrailers
    }

    // MARK: Producer side (any thread)

    /// Appends bytes, waiting while the buffer is full. Returns false once the
    /// transfer no longer wants bytes (cancelled or failed): stop producing.
    @discardableResult
    package func write(_ data: Data) async -> Bool {
        while true {
            let (accepted, wake, reader) = state.withLock {
                state -> (Bool?, (TransferID, EngineSessionID)?, CheckedContinuation<Void, Never>?) in
                if state.cancelled { return (false, nil, nil) }
                guard state.buffered < capacity else { return (nil, nil, nil) }
                append(data, to: &state)
                return (true, takeEngineWaiter(&state), takeLocalReader(&state))
            }
            if let (id, session) = wake { CurlEngine.shared.resumeSending(id, in: session) }
            reader?.resume()
            if let accepted { return accepted }
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.cancelled || state.buffered < capacity { return true }
                    state.producerWaiters.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// `write` for a producer on its own thread (an InputStream pump).
    @discardableResult
    package func writeBlocking(_ data: Data) -> Bool {
        while true {
            let (accepted, wake, reader) = state.withLock {
                state -> (Bool?, (TransferID, EngineSessionID)?, CheckedContinuation<Void, Never>?) in
                if state.cancelled { return (false, nil, nil) }
                guard state.buffered < capacity else {
                    state.blockingProducerWaiting = true
                    return (nil, nil, nil)
                }
                append(data, to: &state)
                return (true, takeEngineWaiter(&state), takeLocalReader(&state))
            }
            if let (id, session) = wake { CurlEngine.shared.resumeSending(id, in: session) }
            reader?.resume()
            if let accepted { return accepted }
            blockingSpace.wait()
        }
    }

    /// No more bytes: the body ends here (followed by `trailers`, for a
    /// stream that `sendsTrailers`), or fails with `error`.
    package func finish(error: URLError? = nil, trailers: [(name: String, value: String)] = []) {
        let (wake, reader) = state.withLock {
            state -> ((TransferID, EngineSessionID)?, CheckedContinuation<Void, Never>?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            state.failure = error
            state.trailers = trailers
            return (takeEngineWaiter(&state), takeLocalReader(&state))
        }
        if let (id, session) = wake { CurlEngine.shared.resumeSending(id, in: session) }
        reader?.resume()
    }

    // MARK: Local reader (a hop answered without the engine)

    /// The next bytes for a reader that is not the engine (a local hop's
    /// responder), waiting for the producer; nil at the end of the body.
    /// Throws the producer's failure, or `.cancelled` once the transfer
    /// stopped wanting bytes. One reader at a time.
    package func nextChunk() async throws(URLError) -> Data? {
        while true {
            let (outcome, waiters, blocking) = state.withLock {
                state -> (Result<Data?, URLError>?, [CheckedContinuation<Void, Never>], Bool) in
                if state.cancelled { return (.failure(URLError(.cancelled)), [], false) }
                if state.head < state.chunks.count {
                    var chunk = state.chunks[state.head]
                    if state.offsetInHead > 0 { chunk = chunk.subdata(in: chunk.startIndex + state.offsetInHead..<chunk.endIndex) }
                    state.head += 1
                    state.offsetInHead = 0
                    if state.head == state.chunks.count {
                        state.chunks.removeAll(keepingCapacity: true)
                        state.head = 0
                    }
                    state.buffered -= chunk.count
                    var waiters: [CheckedContinuation<Void, Never>] = []
                    swap(&waiters, &state.producerWaiters)
                    defer { state.blockingProducerWaiting = false }
                    return (.success(chunk), waiters, state.blockingProducerWaiting)
                }
                if let failure = state.failure { return (.failure(failure), [], false) }
                if state.finished { return (.success(nil), [], false) }
                return (nil, [], false)
            }
            for waiter in waiters { waiter.resume() }
            if blocking { blockingSpace.signal() }
            if let outcome { return try outcome.get() }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.cancelled || state.finished || state.head < state.chunks.count { return true }
                    state.localReader = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// The trailer fields given at `finish`, for the engine (once the body
    /// has ended) or a local reader.
    package var trailers: [(name: String, value: String)] { state.withLock { $0.trailers } }

    /// Whether the transfer stopped wanting bytes.
    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    // MARK: Engine side (engine thread)

    enum ReadResult {
        case bytes(Int)
        /// Nothing buffered yet: pause, the producer will wake the transfer.
        case wait
        case end
        case failed(URLError)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, waking id: TransferID, in session: EngineSessionID)
        -> ReadResult
    {
        let (result, wakeProducers, wakeBlocking) = state.withLock {
            state -> (ReadResult, [CheckedContinuation<Void, Never>], Bool) in
            var copied = 0
            while copied < buffer.count, state.head < state.chunks.count {
                let chunk = state.chunks[state.head]
                let count = min(buffer.count - copied, chunk.count - state.offsetInHead)
                chunk.withUnsafeBytes { source in
                    (buffer.baseAddress! + copied).copyMemory(
                        from: source.baseAddress! + state.offsetInHead, byteCount: count)
                }
                copied += count
                state.offsetInHead += count
                if state.offsetInHead == chunk.count {
                    state.head += 1
                    state.offsetInHead = 0
                }
            }
            if state.head == state.chunks.count {
                state.chunks.removeAll(keepingCapacity: true)
                state.head = 0
            }
            state.buffered -= copied
            var waiters: [CheckedContinuation<Void, Never>] = []
            var blocking = false
            if state.buffered < capacity {
                swap(&waiters, &state.producerWaiters)
                blocking = state.blockingProducerWaiting
                state.blockingProducerWaiting = false
            }
            if copied > 0 { return (.bytes(copied), waiters, blocking) }
            if let failure = state.failure { return (.failed(failure), waiters, blocking) }
            if state.finished { return (.end, waiters, blocking) }
            state.engineWaiting = (id, session)
            return (.wait, waiters, blocking)
        }
        for waiter in wakeProducers { waiter.resume() }
        if wakeBlocking { blockingSpace.signal() }
        return result
    }

    /// Runs `action` once the transfer no longer wants bytes (at once if it
    /// already does not): a producer waiting for its own source (an
    /// AsyncSequence that yields later) is stopped there, not only at its
    /// next write.
    package func onCancel(_ action: @escaping @Sendable () -> Void) {
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled { state.onCancel = action }
            return state.cancelled
        }
        if cancelled { action() }
    }

    /// The transfer is over: release producers, drop what is buffered.
    package func cancel() {
        let (waiters, blocking, onCancel) = state.withLock {
            state -> ([CheckedContinuation<Void, Never>], Bool, (@Sendable () -> Void)?) in
            defer { state.onCancel = nil }
            state.cancelled = true
            state.chunks.removeAll()
            state.buffered = 0
            state.engineWaiting = nil
            var waiters: [CheckedContinuation<Void, Never>] = []
            swap(&waiters, &state.producerWaiters)
            if let reader = takeLocalReader(&state) { waiters.append(reader) }
            defer { state.blockingProducerWaiting = false }
            return (waiters, state.blockingProducerWaiting, state.onCancel)
        }
        for waiter in waiters { waiter.resume() }
        if blocking { blockingSpace.signal() }
        onCancel?()
    }

    private func append(_ data: Data, to state: inout State) {
        guard !data.isEmpty else { return }
        state.chunks.append(data)
        state.buffered += data.count
    }

    private func takeLocalReader(_ state: inout State) -> CheckedContinuation<Void, Never>? {
        defer { state.localReader = nil }
        return state.localReader
    }

    private func takeEngineWaiter(_ state: inout State) -> (TransferID, EngineSessionID)? {
        defer { state.engineWaiting = nil }
        return state.engineWaiting
    }
}
