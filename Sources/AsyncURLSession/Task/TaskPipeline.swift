import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The state machine of one task: lifecycle, the consumer's buffer and
/// backpressure, counters. A value type with explicit transitions; it holds no
/// continuations and performs no side effects. Its owner (`TaskCore`) keeps it
/// behind a lock, applies a transition, and carries out the returned action
/// after releasing the lock.
///
/// Two kinds of consumer:
/// - `.events`: `task.events` pulls one event at a time. Body bytes above the
///   high watermark pause the transfer; draining below the low one resumes it.
/// - `.collect`: `data(for:)` wants the whole body once. Bytes are appended to
///   one buffer and nothing wakes the consumer until the end (one wake-up per
///   request instead of one per chunk).
struct TaskPipeline {
    enum Consumer: Equatable {
        case events
        case collect(limit: Int)
    }

    private enum Lifecycle: Equatable {
        case created
        case running
        case suspended
        case canceling
        /// The transfer is over; `end` holds how. Events may still be queued.
        case finished
    }

    let highWatermark: Int
    let lowWatermark: Int
    private(set) var consumer: Consumer = .events

    private var lifecycle: Lifecycle = .created
    /// The error `cancel(error:)` ended the task with, while the transfer stops.
    private(set) var cancellation: URLError?
    /// `cancel(error:)` was called and the task has not ended yet.
    var isCanceling: Bool { lifecycle == .canceling }
    private var queue = EventQueue()
    /// How the task ended, once it has.
    private(set) var end: Result<Void, URLError>?
    /// The consumer is parked waiting for the next event.
    private var consumerWaiting = false
    /// The engine was told to stop delivering body bytes.
    private(set) var receivePaused = false
    /// An engine transfer is running for this task (false between hops, while
    /// a redirect or challenge decision is pending).
    private(set) var transferInFlight = false
    /// Closed while handlers decide on the response: body bytes wait.
    private var bodyGateClosed = false

    /// The final response; its Foundation object is built on first use
    /// (see `ResponseSource`).
    private(set) var responseSource: ResponseSource?
    private(set) var metrics: TaskMetrics?
    /// The final response's trailer fields: kept from the end of its hop,
    /// delivered (events) at the task's successful end, dropped on failure.
    private(set) var trailers: ResponseTrailers?
    private(set) var bytesReceived: Int64 = 0
    private(set) var bytesSent: Int64 = 0
    /// `bytesSent` as of the last upload progress event.
    private var progressReportedBytesSent: Int64 = 0
    /// When a parked consumer was last woken for upload progress, or the
    /// hop's first report came (monotonic nanoseconds; nil before it).
    private var progressWokeAt: UInt64?
    private(set) var bytesExpectedToSend: Int64 = 0
    private var collected = CollectedBody()
    /// A copy of what a collecting consumer got so far.
    var collectedBody: Data { collected.bytes }

    init(highWatermark: Int, lowWatermark: Int) {
        self.highWatermark = max(1, highWatermark)
        self.lowWatermark = min(max(0, lowWatermark), self.highWatermark)
    }

    var state: TaskState {
        switch lifecycle {
        case .created, .suspended: return .suspended
        case .running: return .running
        case .canceling: return .canceling
        case .finished: return .completed
        }
    }

    var error: URLError? {
        if case .failure(let error) = end { return error }
        return nil
    }

    /// Set for a resumed download: the whole file's expected size.
    private(set) var expectedTotalOverride: Int64?

    var bytesExpectedToReceive: Int64 {
        expectedTotalOverride ?? responseSource?.expectedContentLength ?? -1
    }

    /// Builds the Foundation response if nobody has yet: keep it off the
    /// engine thread's hot path (`responseSource` gives cheap fields).
    var response: HTTPURLResponse? { responseSource?.response }

    // MARK: - Control transitions

    enum ResumeAction: Equatable {
        case startTransfer
        case resumeTransfer
        case none
    }

    mutating func resume() -> ResumeAction {
        switch lifecycle {
        case .created:
            lifecycle = .running
            transferInFlight = true
            return .startTransfer
        case .suspended:
            lifecycle = .running
            return .resumeTransfer
        case .running, .canceling, .finished:
            return .none
        }
    }

    enum SuspendAction: Equatable {
        case suspendTransfer
        case none
    }

    mutating func suspend() -> SuspendAction {
        guard lifecycle == .running else { return .none }
        lifecycle = .suspended
        return .suspendTransfer
    }

    enum CancelAction {
        /// Ask the engine to stop; it reports the end as usual. With no
        /// transfer in flight (between hops, or before the first one while
        /// a body stream is awaited) nothing will report it: the owner ends
        /// the task. The events nobody will pull are handed out to be
        /// released after the lock: an unanswered decision among them
        /// settles with its default when it goes, and settling takes the
        /// task's lock.
        case cancelTransfer(dropped: [TaskEvent])
        /// Never started: the task ends here, with this error.
        case finishWithoutTransfer(EndAction)
        case none
    }

    mutating func cancel(error: URLError) -> CancelAction {
        switch lifecycle {
        case .created:
            return .finishWithoutTransfer(finish(error: error, metrics: nil))
        case .running, .suspended:
            // Between hops (a decision pending) there is no transfer to stop:
            // the owner ends the task itself, with the metrics of the hops
            // so far (`transferInFlight` false, see `CancelAction`).
            lifecycle = .canceling
            cancellation = error
            // Bytes not yet consumed are dropped: cancel takes effect at once
            // even while the body arrives at full speed.
            collected = CollectedBody()
            return .cancelTransfer(dropped: queue.takeAll())
        case .canceling, .finished:
            return .none
        }
    }

    /// A response decision answered `cancel` after the transfer had already
    /// ended (a small body arrives whole while the decision waits): the body
    /// queued behind the response must still not be delivered. False when
    /// this does not apply (then an ordinary `cancel` does). Returns the
    /// events dropped, to be released after the lock (see `CancelAction`).
    mutating func cancelDeliveredResponse(error: URLError) -> [TaskEvent]? {
        // Whether the transfer ended well or not, nothing queued behind the
        // response may reach the consumer after it said cancel.
        guard lifecycle == .finished, consumer == .events, !consumerWaiting else { return nil }
        let dropped = queue.takeAll()
        end = .failure(error)
        if let metrics { _ = enqueue(.metrics(metrics)) }
        return dropped
    }

    /// Takes out the events nobody will pull any more (the task's last
    /// reference is gone); the caller releases them outside the lock.
    mutating func takeUndelivered() -> [TaskEvent] {
        queue.takeAll()
    }

    /// The consumer asked for the collected body instead of events. Only
    /// before start: returns false (and changes nothing) after.
    @discardableResult
    mutating func collectBody(limit: Int) -> Bool {
        guard lifecycle == .created else { return false }
        consumer = .collect(limit: limit)
        return true
    }

    // MARK: - Engine transitions

    enum DeliveryAction {
        /// Hand this event to the parked consumer.
        case wakeConsumer(TaskEvent)
        /// The parked consumer's next event is queued and may still grow:
        /// hand it over once the engine's current read is in
        /// (`handOffQueued()`).
        case handOffAfterRead
        case none
    }

    mutating func receivedResponse(_ response: HTTPURLResponse, decision: ResponseDecision) -> DeliveryAction {
        receivedResponse(ResponseSource(response), decision: decision)
    }

    /// A collecting consumer gets the response at the end, so its Foundation
    /// object is not built here; an events consumer gets it now (the caller
    /// builds it before taking the lock).
    /// `decision` may be nil for a collecting consumer, which answers none.
    mutating func receivedResponse(_ source: ResponseSource, decision: ResponseDecision?) -> DeliveryAction {
        guard lifecycle != .canceling, lifecycle != .finished else { return .none }
        responseSource = source
        if case .collect = consumer { return .none }
        guard let response = source.response else { return .none }
        // An events consumer always gets one; a fresh one takes `.allow`.
        return enqueue(.response(response, decision ?? ResponseDecision()))
    }

    /// A redirect or challenge event for an events consumer.
    mutating func offer(_ event: TaskEvent) -> DeliveryAction {
        guard lifecycle != .canceling, lifecycle != .finished, consumer == .events else { return .none }
        return enqueue(event)
    }

    /// The final response's hop ended with trailer fields: they follow the
    /// body when the task ends well (`finish`).
    mutating func receivedTrailers(_ received: ResponseTrailers) {
        guard lifecycle != .canceling, lifecycle != .finished else { return }
        trailers = received
    }

    /// A hop's transfer ended without ending the task (a decision follows).
    mutating func hopEnded() {
        transferInFlight = false
        receivePaused = false
    }

    /// Returns false when the task ended meanwhile (then no hop starts).
    mutating func hopStarting() -> Bool {
        guard lifecycle == .running || lifecycle == .suspended else { return false }
        transferInFlight = true
        return true
    }

    mutating func closeBodyGate() {
        bodyGateClosed = true
    }

    /// Returns whether the engine must be told to resume receiving.
    mutating func openBodyGate() -> Bool {
        bodyGateClosed = false
        guard receivePaused, queue.bufferedBytes <= lowWatermark else { return false }
        receivePaused = false
        return true
    }

    enum BodyAction {
        /// Take the bytes; maybe wake the consumer with them.
        case accept(DeliveryAction)
        /// Do not take the bytes: the engine pauses and hands them again later.
        case pause
        /// Stop the transfer with this error.
        case abort(URLError)
    }

    /// Body bytes for an events consumer. `makeChunk` copies them out of
    /// libcurl's buffer; it runs only when the bytes are taken.
    /// libcurl's largest single write (CURL_MAX_WRITE_SIZE): a write this
    /// size is usually followed by more of the same read.
    static let fullWrite = 16 * 1024
    /// Room reserved in a chunk that starts with a full write: a lone
    /// transfer's receive buffer (64 KiB), so one read fits in one chunk.
    /// A transfer beside others reads 16 KiB at a time; its next reads join
    /// the chunk while the consumer has not taken it yet.
    static let coalescedChunkCapacity = 64 * 1024

    /// Body bytes for an events consumer. `makeChunk(capacity)` copies them
    /// into a new `Data` with at least that capacity; `append` adds them to
    /// a queued chunk that has room (see `EventQueue`).
    mutating func receivedBody(
        count: Int, makeChunk: (Int) -> Data, append: (inout Data) -> Void
    ) -> BodyAction {
        switch lifecycle {
        case .canceling:
            return .abort(URLError(.cancelled))
        case .finished:
            return .abort(URLError(.cancelled))
        case .created, .running, .suspended:
            break
        }
        if bodyGateClosed || queue.bufferedBytes >= highWatermark {
            receivePaused = true
            return .pause
        }
        bytesReceived += Int64(count)
        if queue.appendToOpenChunk(count: count, append) { return .accept(.none) }
        // A parked consumer is not handed these bytes at once: the rest of
        // the same read (libcurl writes a 64 KiB read as four 16 KiB writes)
        // joins them first. Woken per write, a consumer faster than the
        // network took each 16 KiB and parked again: four futex wakes and
        // waits per read.
        let handOff = consumerWaiting && queue.isEmpty
        // Room only while the consumer keeps up: behind a slow one (the
        // queue a quarter full or more) chunks stay exact, which kept a 1 GiB
        // body read at 150 MiB/s about 3 MiB lower in peak RSS.
        let keepingUp = queue.bufferedBytes < highWatermark / 4
        let capacity = count == Self.fullWrite && keepingUp ? Self.coalescedChunkCapacity : count
        queue.appendChunk(makeChunk(capacity), room: capacity - count)
        return .accept(handOff ? .handOffAfterRead : .none)
    }

    /// Body bytes for a collecting consumer, appended by `append`. (A
    /// closure, not the buffer itself: the engine's buffer must not join the
    /// lock's isolation region.)
    mutating func receivedBodyToCollect(count: Int, append: (inout CollectedBody) -> Void) -> BodyAction {
        guard case .collect(let limit) = consumer else { preconditionFailure("not collecting") }
        guard lifecycle != .canceling, lifecycle != .finished else { return .abort(URLError(.cancelled)) }
        if bodyGateClosed {
            receivePaused = true
            return .pause
        }
        if collected.count + count > limit {
            return .abort(URLError(
                .dataLengthExceedsMaximum,
                userInfo: [NSLocalizedDescriptionKey:
                    "The response body exceeds maximumCollectedBodySize (\(limit) bytes); "
                    + "use task.events or bytes(for:) to stream it."]))
        }
        if collected.isEmpty, let expected = responseSource?.expectedContentLength, expected > 0,
            expected <= Int64(limit)
        {
            collected.reserve(Int(expected))
        }
        append(&collected)
        bytesReceived += Int64(count)
        return .accept(.none)
    }

    /// The collected body, handed over (once, at the end).
    mutating func takeCollectedBody() -> Data {
        collected.take()
    }

    /// The body of a held response that became the result (a redirect not
    /// followed, a 401 not retried). Returns an error when it breaks the
    /// collecting consumer's limit.
    mutating func receivedHeldBody(_ body: Data) -> (DeliveryAction, URLError?) {
        guard !body.isEmpty, lifecycle != .canceling, lifecycle != .finished else { return (.none, nil) }
        bytesReceived += Int64(body.count)
        switch consumer {
        case .collect(let limit):
            if collected.count + body.count > limit {
                return (.none, URLError(.dataLengthExceedsMaximum))
            }
            collected.append(body)
            return (.none, nil)
        case .events:
            return (enqueue(.data(body)), nil)
        }
    }

    /// Bytes for a download's file. Returns whether to take them; the caller
    /// writes them. Pauses while the response gate is closed.
    mutating func receivedDownloadBytes(count: Int) -> BodyAction {
        guard lifecycle != .canceling, lifecycle != .finished else { return .abort(URLError(.cancelled)) }
        if bodyGateClosed {
            receivePaused = true
            return .pause
        }
        bytesReceived += Int64(count)
        return .accept(.none)
    }

    /// Bytes counted by `receivedDownloadBytes` that were handed back (the
    /// file writer was behind): the engine delivers them again.
    mutating func undoDownloadBytes(count: Int) {
        bytesReceived -= Int64(count)
        receivePaused = true
    }

    /// Download progress (coalesced like upload progress).
    mutating func downloadProgress(_ progress: TransferProgress) -> DeliveryAction {
        guard consumer == .events, lifecycle == .running || lifecycle == .suspended else { return .none }
        if queue.mergeProgress(.downloadProgress(progress)) { return .none }
        return enqueue(.downloadProgress(progress))
    }

    /// Whether body bytes must wait now (response gate closed, or the
    /// consumer's buffer above the high watermark); marks receiving paused.
    mutating func mustPauseBody() -> Bool {
        guard bodyGateClosed || queue.bufferedBytes >= highWatermark else { return false }
        receivePaused = true
        return true
    }

    /// Body bytes of one part of a multipart/x-mixed-replace response.
    mutating func receivedPartBody(_ data: Data) -> DeliveryAction {
        guard lifecycle != .canceling, lifecycle != .finished else { return .none }
        bytesReceived += Int64(data.count)
        return enqueue(.data(data))
    }

    /// A data task becomes a download: its queued body chunks go to the file.
    mutating func takeQueuedBody() -> [Data] {
        let chunks = queue.removeData()
        if receivePaused && !bodyGateClosed { receivePaused = false }
        return chunks
    }

    /// The queued body chunks, left in the queue.
    var queuedBody: [Data] { queue.dataChunks }

    /// The bytes of the queued body (read without gathering its chunks).
    var queuedBodyBytes: Int { queue.bufferedBytes }

    /// A data task that became a download after its transfer ended: the
    /// file's events go where the body was, before the metrics.
    mutating func insertDownloadEnd(_ events: [TaskEvent]) {
        queue.insertBeforeMetrics(events)
    }

    /// A download's response continues its file: it holds `offset` bytes
    /// already, of `expectedTotal` (-1: unknown) for the whole file.
    mutating func resumedAt(offset: Int64, expectedTotal: Int64) {
        bytesReceived = offset
        expectedTotalOverride = expectedTotal
    }

    /// A hop starts sending a body of this length (-1 unknown, 0 none).
    mutating func startedSending(expected: Int64) {
        bytesSent = 0
        progressReportedBytesSent = 0
        progressWokeAt = nil
        bytesExpectedToSend = expected
    }

    /// A parked consumer is woken for upload progress alone at most this
    /// often (nanoseconds), as downloads report theirs (`ProgressThrottle`).
    static let progressWakeInterval: UInt64 = 50_000_000

    /// Upload progress, at `now` (monotonic nanoseconds). Consecutive
    /// progress events the consumer has not pulled yet merge into one, so a
    /// fast upload cannot flood the buffer.
    ///
    /// A parked consumer is woken for upload progress at most once per
    /// `progressWakeInterval`, counted from the hop's first report, and for
    /// the last (every byte of a body of known length sent). Why: libcurl
    /// reports progress per read of the body, nine times per MiB, and each
    /// report woke the consumer from its wait: W4 (POSTs of 1 MiB) through
    /// `task.events` parked 5.5 times per request and used about a quarter
    /// more CPU than `data(for:)`. Waking for the first report too still cost
    /// a wake per request whose body goes out within the interval: 2,473
    /// against 1,359 context switches for 500 such POSTs (`perf stat`), and
    /// 403 against 368 µs of CPU per request, where `data(for:)` used 372
    /// (medians of 7 alternating runs of 2,000). Bytes not reported count in
    /// the next report. A body of unknown length has no last report to catch
    /// up, so its progress is never held back.
    mutating func sentBody(totalBytesSent: Int64, totalBytesExpected: Int64, now: UInt64) -> DeliveryAction {
        bytesSent = totalBytesSent
        bytesExpectedToSend = totalBytesExpected
        guard consumer == .events, lifecycle == .running || lifecycle == .suspended else { return .none }
        let isLast = totalBytesSent >= totalBytesExpected
        let wokeAt = progressWokeAt ?? now
        progressWokeAt = wokeAt
        if consumerWaiting, queue.isEmpty, totalBytesExpected > 0, !isLast,
            now &- wokeAt < Self.progressWakeInterval
        {
            return .none
        }
        let progress = TransferProgress(
            bytes: totalBytesSent - progressReportedBytesSent, totalBytes: totalBytesSent,
            totalBytesExpected: totalBytesExpected)
        progressReportedBytesSent = totalBytesSent
        if queue.mergeProgress(.uploadProgress(progress)) { return .none }
        let action = enqueue(.uploadProgress(progress))
        if case .wakeConsumer = action { progressWokeAt = now }
        return action
    }

    enum EndAction {
        /// Wake the parked events consumer with this event (the metrics).
        case wakeConsumer(TaskEvent)
        /// Wake the parked events consumer: the stream ends, or throws this error.
        case endStream(URLError?)
        /// Hand the collected body (or the error) to the collecting consumer.
        case completeCollect
        case none
    }

    mutating func finish(error: URLError?, metrics: TaskMetrics?) -> EndAction {
        guard lifecycle != .finished else { return .none }
        // A transfer that ended while our cancel was on its way to the
        // engine (completed, failed, or a decision that settled with its
        // default) still ends cancelled, as cancel() promised.
        let error = lifecycle == .canceling ? (cancellation ?? error) : error
        lifecycle = .finished
        end = error.map { .failure($0) } ?? .success(())
        self.metrics = metrics
        if error != nil { trailers = nil }
        if case .collect = consumer { return .completeCollect }
        // Trailers, then metrics: the first one enqueued may wake a parked
        // consumer; the other then waits in the queue behind it.
        var wake: TaskEvent?
        if let trailers, case .wakeConsumer(let event) = enqueue(.trailers(trailers)) { wake = event }
        if let metrics, case .wakeConsumer(let event) = enqueue(.metrics(metrics)) { wake = event }
        if let wake { return .wakeConsumer(wake) }
        if consumerWaiting && queue.isEmpty {
            consumerWaiting = false
            return .endStream(error)
        }
        return .none
    }

    // MARK: - Consumer transitions

    enum NextAction {
        case deliver(TaskEvent, resumeReceiving: Bool)
        case finishStream
        case failStream(URLError)
        case wait
    }

    mutating func next() -> NextAction {
        if let ready = nextIfReady() { return ready }
        consumerWaiting = true
        return .wait
    }

    /// As `next()`, but nil instead of `.wait`: the consumer is not parked.
    mutating func nextIfReady() -> NextAction? {
        if let event = queue.popFirst() {
            var resumeReceiving = false
            if receivePaused && !bodyGateClosed && queue.bufferedBytes <= lowWatermark && lifecycle != .finished {
                receivePaused = false
                resumeReceiving = true
            }
            return .deliver(event, resumeReceiving: resumeReceiving)
        }
        if let end {
            switch end {
            case .success: return .finishStream
            case .failure(let error): return .failStream(error)
            }
        }
        return nil
    }

    /// After a read (`DeliveryAction.handOffAfterRead`): the queue's head for
    /// the consumer if it is still parked, nil if anything else reached it
    /// meanwhile (the end, a cancel).
    mutating func handOffQueued() -> NextAction? {
        guard consumerWaiting, let action = nextIfReady(), case .deliver = action else { return nil }
        consumerWaiting = false
        return action
    }

    private mutating func enqueue(_ event: TaskEvent) -> DeliveryAction {
        if consumerWaiting && queue.isEmpty {
            consumerWaiting = false
            return .wakeConsumer(event)
        }
        queue.append(event)
        return .none
    }
}
