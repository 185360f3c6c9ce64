import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request for one resource, as `URLSessionTask`: it starts suspended,
/// `resume()` starts it, and `events` tells what happens to it.
///
/// ```swift
/// let task = session.dataTask(with: url)
/// task.resume()
/// for try await event in task.events {
///     switch event {
///     case .response(let response): print(response.statusCode)
///     case .data(let chunk): body.append(chunk)
///     default: break
///     }
/// }
/// ```
///
/// `events` has one consumer: iterate it from one place. Pulling is what moves
/// the body: a consumer that stops pulling pauses the transfer once about
/// `streamBufferHighWatermark` bytes wait for it. Cancelling the Swift task
/// that iterates cancels the transfer: a pull that is waiting throws
/// `URLError(.cancelled)`; between two pulls the stream ends, as an
/// `AsyncThrowingStream` does when its consumer is cancelled, and `error` is
/// then `URLError(.cancelled)`. Ending the iteration early cancels the task
/// too, as Apple's `AsyncBytes` does: a `break` out of `for try await`, or
/// the stream and its iterator dropped before the end. So does the last
/// reference to an unfinished task (and to its `events`) going away.
public final class SessionTask: Sendable {
    let core: TaskCore

    init(core: TaskCore) {
        self.core = core
        // Only handlers are handed the task. The weak reference gives the
        // task a side table: an allocation, and slower retains and releases
        // for its whole life, about 1% of a small request's CPU.
        if core.hasHandlers { core.attach(owner: self) }
    }

    deinit {
        // Nobody can observe this task any more: don't keep a paused transfer
        // (or a never-started one) around, nor events nobody will pull.
        if !core.hasEnded { core.cancel() }
        core.releaseUnconsumed()
    }

    public var kind: TaskKind { core.kind }

    /// Unique among the tasks of its session.
    public var taskIdentifier: Int { core.identifier }
    public var originalRequest: URLRequest? { core.originalRequest }
    /// The request being sent now (differs from `originalRequest` after redirects).
    public var currentRequest: URLRequest? { core.currentRequest }
    public var response: URLResponse? { core.response }
    /// Set once the task failed (a `URLError`); nil while running or on success.
    public var error: (any Error)? { core.error }
    public var state: TaskState { core.state }
    public var countOfBytesReceived: Int64 { core.countOfBytesReceived }
    /// From Content-Length; -1 when unknown.
    public var countOfBytesExpectedToReceive: Int64 { core.countOfBytesExpectedToReceive }
    public var countOfBytesSent: Int64 { core.countOfBytesSent }
    public var countOfBytesExpectedToSend: Int64 { core.countOfBytesExpectedToSend }
    /// Body progress (received bytes of the expected length).
    public var progress: Progress { core.progress }
    /// The metrics of a finished task.
    public var metrics: TaskMetrics? { core.metrics }
    /// The fields the response sent after its body, once the task has
    /// ended well (nil before, on failure, or when it sent none). For
    /// `task.events` they also come as `.trailers`; for `collectedData()`
    /// and `bytes(for:)` (`AsyncBytes.task`), read them here at the end.
    public var trailers: ResponseTrailers? { core.trailers }

    /// 0...1, as URLSessionTask; accepted and kept, not used for scheduling.
    public var priority: Float {
        get { core.priority }
        set { core.priority = newValue }
    }

    /// Whether this task's new TLS connections offer server-trust and
    /// client-certificate challenges; starts as the configuration's
    /// `offersTLSChallenges`. Set it before `resume()`.
    public var offersTLSChallenges: Bool {
        get { core.offersTLSChallenges }
        set { core.offersTLSChallenges = newValue }
    }

    /// When this task sends its request again by itself (see
    /// `RetryPolicy`); starts as the configuration's `retryPolicy`. Set it
    /// before `resume()`: a change applies to the attempts that follow.
    public var retryPolicy: RetryPolicy? {
        get { core.retryPolicy }
        set { core.retryPolicy = newValue }
    }

    /// This task's own interceptors (see `RequestMiddleware`), run inside
    /// the session's `middleware`. Set them before `resume()`.
    public var middleware: [any RequestMiddleware] {
        get { core.middleware }
        set { core.middleware = newValue }
    }

    /// The Unix domain socket this task's http and https requests go over
    /// (its redirects too), instead of the session's `unixSocket` or TCP;
    /// nil (the default): the session's. An `http+unix://` URL names its
    /// own socket and ignores this. Set it before `resume()`.
    public var unixSocket: UnixSocket? {
        get { core.unixSocket }
        set { core.unixSocket = newValue }
    }

    public var taskDescription: String? {
        get { core.taskDescription }
        set { core.taskDescription = newValue }
    }

    /// Starts the task, or continues a suspended one. When the I/O thread the
    /// transfer goes to has nothing in flight, the request is sent from the
    /// calling thread (no thread is woken to send it); `resume()` still
    /// never waits for the network.
    public func resume() { core.resume() }

    /// Pauses the transfer in both directions until `resume()`. A suspended
    /// task does not time out for idleness; the resource timeout still runs.
    public func suspend() { core.suspend() }

    /// Ends the task with `URLError(.cancelled)`. Bytes not yet consumed are dropped.
    public func cancel() { core.cancel() }

    /// Stops a download and hands back resume data for
    /// `downloadTask(withResumeData:)`, or nil when it cannot be resumed (the
    /// server gave no ETag or Last-Modified, nothing was received, or the task
    /// already ended). The partial file stays in the download folder.
    public func cancelByProducingResumeData() async -> Data? {
        await core.cancelByProducingResumeData()
    }

    /// `cancelByProducingResumeData()` with a completion handler, as URLSession.
    public func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void) {
        let core = core
        Task { completionHandler(await core.cancelByProducingResumeData()) }
    }

    /// Makes a data or upload task collect its whole body for
    /// `collectedData()` instead of delivering `events`, as
    /// `Session.data(for:)` does: no event per chunk, one buffer of the
    /// announced length. Redirects and challenges are then answered by the
    /// task's or the session's `SessionTaskDelegate`, or by the defaults.
    /// Only before the first `resume()`: returns false (and changes nothing)
    /// after it.
    @discardableResult
    public func collectBody() -> Bool {
        core.useCollectingConsumer()
    }

    /// The body and response of a task set up with `collectBody()` and
    /// resumed, when it ends. Bodies larger than the configuration's
    /// `maximumCollectedBodySize` fail with `URLError(.dataLengthExceedsMaximum)`.
    /// Cancelling the calling Swift task cancels the transfer.
    public func collectedData() async throws -> (Data, URLResponse) {
        guard core.collectsBody else {
            throw URLError.make(
                .resourceUnavailable, url: core.failingURLString,
                reason: "collectedData() needs collectBody() before the task's first resume(); read `events` instead.")
        }
        let (data, response) = try await core.collect()
        return (data, response)
    }

    /// Calls `callback` once a task set up with `collectBody()` ends (at
    /// once if it has; otherwise on an I/O thread, so `callback` must only
    /// hand off, e.g. to a queue), after which `takeCollectedResult()` gives
    /// the outcome. No Swift task waits meanwhile: the way to collect a body
    /// from code that answers through callbacks (the classic adapter's
    /// completion handlers do).
    public func whenCollectionEnds(_ callback: @escaping @Sendable () -> Void) {
        core.whenCollectionEnds(callback)
    }

    /// For adapters that run callbacks on threads of their own (the classic
    /// API's delegate queue): on a thread that would otherwise go idle, waits for a task set up with `collectBody()`
    /// (resumed, with no body byte yet) while it is the only transfer of
    /// its sleeping I/O thread, for at most a millisecond (see
    /// `CurlEngine.waitInline`). The `whenCollectionEnds` callback may run
    /// on this thread meanwhile. Returns at once otherwise.
    @_spi(Adapters) public func waitInlineForCollection() {
        core.waitInlineForCollection()
    }

    /// The body and response of an ended task set up with `collectBody()`,
    /// or why it failed (see `whenCollectionEnds`). The body is handed over
    /// once: a second call gets an empty body.
    public func takeCollectedResult() -> Result<(Data, HTTPURLResponse), URLError> {
        core.takeCollectedResult()
    }

    /// The next event, or nil at the end (throwing the task's error), pulled
    /// as `events` does but without a stream: one `await` per event, and no
    /// cancel-on-abandon watch, so a consumer that stops pulling (to hand the
    /// task over, as `AsyncBytes` takes it at the response) does not end the
    /// task. Pull from one place at a time, and not beside `events`.
    public func nextEvent() async throws -> TaskEvent? {
        switch try core.pullIfReady() {
        case .event(let event): return event
        case .end: return nil
        case .mustWait: return try await core.waitForNextEvent()
        }
    }

    /// The task's lifecycle as events; finishes after the last one, or throws
    /// the task's error. See the type's documentation for the rules.
    public var events: AsyncThrowingStream<TaskEvent, any Error> {
        // The closure keeps the task (and so the transfer) alive while someone
        // holds the stream, even after the caller dropped the task itself.
        let watch = IterationWatch(task: self)
        return AsyncThrowingStream(unfolding: { [watch] in
            // `nextEvent()` written out: a ready event is handed over without
            // entering another async function (see `TaskCore.pullIfReady`).
            let core = watch.task.core
            switch try core.pullIfReady() {
            case .event(let event): return event
            case .end: return nil
            case .mustWait: return try await core.waitForNextEvent()
            }
        })
    }
}

/// Cancels a task whose consumption ended before the task did: its
/// `events` stream, or an `AsyncBytes` iterator, went away unfinished (a
/// `break` out of `for try await`, an iterator dropped). Nobody will pull
/// the rest, so the transfer would stay paused behind the high watermark,
/// exempt from the idle timeout, holding its connection. It also covers a
/// consuming Swift task cancelled between two pulls, which
/// `AsyncThrowingStream(unfolding:)` answers by ending the stream without
/// calling the producer again.
final class IterationWatch: Sendable {
    let task: SessionTask

    init(task: SessionTask) {
        self.task = task
    }

    deinit {
        if !task.core.hasEnded { task.core.cancel() }
    }
}
