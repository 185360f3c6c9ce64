internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The owner of one task: its `TaskPipeline` (consumer, buffer, lifecycle)
/// and `HopState` (the current request/response exchange) behind one lock,
/// the parked consumer's continuation, and the decisions in flight. It
/// applies transitions under the lock and carries out what they return
/// (engine commands, waking the consumer, asking handlers) after releasing it.
///
/// Body bytes go engine thread -> `transferDidReceiveBody` -> the pipeline's
/// buffer -> the consumer; they never pass through the `Session` actor.
final class TaskCore: Sendable {
    let identifier: Int
    let context: SessionContext
    let originalRequest: URLRequest
    /// Task-level handler (Apple's per-task delegate); the session's comes after it.
    let delegate: (any SessionTaskDelegate)?
    private let initialKind: TaskKind
    let upload: UploadSource
    /// See `SessionTask.offersTLSChallenges`. An atomic, not guarded state:
    /// every https hop reads it, and a task without TLS challenges should
    /// pay no lock for them.
    let offersTLS = Atomic<Bool>(false)
    /// Set (under the lock) once `cancel()` made the pipeline cancel: read
    /// without the lock after a hop's transfer was handed to the engine (see
    /// `launchHop`), where a lock acquisition per request found it unset
    /// but for a cancel racing the start.
    let cancelRequested = Atomic<Bool>(false)
    /// Set, under the lock, when the task ends (`finish`): read without the
    /// lock by the public task's and the events stream's deinits, which
    /// cancel a task that has not ended (two acquisitions per `task.events`
    /// request, before).
    private let ended = Atomic<Bool>(false)
    /// Set when a pull handed the consumer the end: nothing undelivered or
    /// outstanding is left for `releaseUnconsumed` (whose lock it skips).
    private let consumerSawEnd = Atomic<Bool>(false)
    /// Set when a data task's response decision made it a download (under
    /// the lock, with `TaskMachine.download`; see `kind`).
    let becameDownload = Atomic<Bool>(false)
    /// Set while the task has a retry policy (`TaskMachine.retry`): read without
    /// the lock where a task without one must not pay for asking.
    let retries = Atomic<Bool>(false)
    /// Set while the task has middleware (the session's or its own): read
    /// without the lock for every hop and delivered response.
    let usesMiddleware = Atomic<Bool>(false)
    /// Set while the task has a Unix socket of its own (`unixSocket`).
    let ownUnixSocketSet = Atomic<Bool>(false)
    /// For a download made from resume data.
    let resumeFrom: ResumeData?
    let createdAt = Date()
    let guarded: Mutex<TaskMachine>
    private let refusal: URLError?
    /// The configuration's logger for this task, nil without one.
    let log: TaskLog?
    /// The task's span and metrics, nil when no tracer, instrument or
    /// metrics factory is in use (issue 47): hooked where `log` is.
    let observation: TaskObservation?
    /// What the configuration's `HARRecorder` needs of this task's hops,
    /// nil without one (each hook is then one nil check).
    let har: HARTaskCapture?

    /// - Parameter refusal: set for a task that must not run (asked of an
    ///   invalidated session, from invalid resume data); it fails with this
    ///   error when resumed, before anything is sent.
    init(
        identifier: Int, context: SessionContext, request: URLRequest, delegate: (any SessionTaskDelegate)?,
        kind: TaskKind = .data, upload: UploadSource = .none, resumeFrom: ResumeData? = nil,
        refusal: URLError? = nil
    ) {
        self.identifier = identifier
        self.initialKind = kind
        self.upload = upload
        self.resumeFrom = resumeFrom
        self.context = context
        self.originalRequest = request
        self.delegate = delegate
        self.refusal = refusal
        // The configuration's fields are read in place: a copy of the whole
        // value (dozens of fields, each retained) cost a value-witness call
        // per task (0.4% of a small GET's samples at 16 at once).
        log = context.configuration.logger == nil ? nil : TaskLog(configuration: context.configuration)
        observation = TaskObservation.make(configuration: context.configuration, request: request)
        // A session made before the metrics backend was bootstrapped gets
        // its pool meters now (one load per observed task; none otherwise).
        if let metrics = observation?.metrics { context.observePool(with: metrics.factory) }
        har = context.configuration.harRecorder.map {
            HARTaskCapture(recorder: $0, sensitiveHeaderNames: context.configuration.sensitiveHeaderNames)
        }
        guarded = Mutex(TaskMachine(
            pipeline: TaskPipeline(
                highWatermark: context.configuration.streamBufferHighWatermark,
                lowWatermark: context.configuration.streamBufferLowWatermark),
            hop: HopState(request: request, credential: nil),
            retry: context.configuration.retryPolicy.map(RetryState.init),
            isUploadTask: kind == .upload,
            metricsReadByHandlers: delegate != nil || context.delegate != nil || har != nil))
        if context.configuration.offersTLSChallenges { offersTLS.store(true, ordering: .relaxed) }
        if !context.configuration.middleware.isEmpty { usesMiddleware.store(true, ordering: .relaxed) }
        if context.configuration.retryPolicy != nil { retries.store(true, ordering: .relaxed) }
    }

    /// The task's last reference went away: nobody can pull or answer any
    /// more. Settles an outstanding response decision with its default
    /// (allow, which does nothing) and drops the undelivered events, which
    /// ends the reference cycles of response decisions (see
    /// `makeResponseDecision`). Other decisions hold the core weakly and are
    /// left as before. Both are released outside the lock: settling takes it.
    func releaseUnconsumed() {
        // The consumer pulled the end: the pull before it settled the last
        // decision, and nothing is queued after an end.
        if consumerSawEnd.load(ordering: .relaxed) { return }
        let (outstanding, undelivered) = guarded.withLock { $0.takeUnconsumed() }
        outstanding?.settleWithDefault()
        _ = undelivered  // released here, after the lock
    }

    deinit {
        // A downloaded file nobody pulled past, or a download never finished.
        let (handedOut, unfinished) = guarded.withLock { $0.filesLeftBehind() }
        if let handedOut { unlink(handedOut.path) }
        unfinished?.remove()
    }

    var engine: CurlEngine { CurlEngine.shared }

    var failingURLString: String? { originalRequest.url?.absoluteString }

    // MARK: - Observed state

    var state: TaskState { guarded.withLock { $0.pipeline.state } }
    /// Whether the task ended (its state is `.completed`), without the lock.
    var hasEnded: Bool { ended.load(ordering: .acquiring) }
    /// The kind the task was made as, or `.download` once a data or upload
    /// task's response decision said `becomeDownload`. Read without the
    /// lock: it changes once at most (`becameDownload`), and the cache's plan
    /// reads it for every GET of a session with a cache.
    var kind: TaskKind { becameDownload.load(ordering: .relaxed) ? .download : initialKind }
    /// Built (once) outside the lock: see ResponseSource.
    var response: HTTPURLResponse? { guarded.withLock { $0.pipeline.responseSource }?.response }
    var error: URLError? { guarded.withLock { $0.pipeline.error } }
    var metrics: TaskMetrics? { guarded.withLock { $0.pipeline.metrics } }
    var trailers: ResponseTrailers? {
        guarded.withLock { $0.trailersAtEnd }
    }
    var currentRequest: URLRequest { guarded.withLock { $0.hop.request } }
    var countOfBytesReceived: Int64 { guarded.withLock { $0.pipeline.bytesReceived } }
    var countOfBytesExpectedToReceive: Int64 { guarded.withLock { $0.pipeline.bytesExpectedToReceive } }
    var countOfBytesSent: Int64 { guarded.withLock { $0.pipeline.bytesSent } }
    var countOfBytesExpectedToSend: Int64 { guarded.withLock { $0.pipeline.bytesExpectedToSend } }

    var taskDescription: String? {
        get { guarded.withLock { $0.taskDescription } }
        set { guarded.withLock { $0.taskDescription = newValue } }
    }

    var offersTLSChallenges: Bool {
        get { offersTLS.load(ordering: .relaxed) }
        set { offersTLS.store(newValue, ordering: .relaxed) }
    }

    var retryPolicy: RetryPolicy? {
        get { guarded.withLock { $0.retry?.policy } }
        set {
            guarded.withLock { $0.setRetryPolicy(newValue) }
            retries.store(newValue != nil, ordering: .relaxed)
        }
    }

    /// See `SessionTask.unixSocket`. Behind a flag, so that a hop of a task
    /// without a socket of its own (nearly all) takes no lock for it.
    var unixSocket: UnixSocket? {
        get { ownUnixSocketSet.load(ordering: .acquiring) ? guarded.withLock { $0.ownUnixSocket } : nil }
        set {
            guarded.withLock { $0.ownUnixSocket = newValue }
            ownUnixSocketSet.store(newValue != nil, ordering: .releasing)
        }
    }

    var middleware: [any RequestMiddleware] {
        get { guarded.withLock { $0.middleware.taskLayers } }
        set {
            guarded.withLock { $0.middleware.taskLayers = newValue }
            usesMiddleware.store(!newValue.isEmpty || !context.configuration.middleware.isEmpty, ordering: .relaxed)
        }
    }

    var priority: Float {
        get { guarded.withLock { $0.priority } }
        set { guarded.withLock { $0.priority = min(max(newValue, 0), 1) } }
    }

    /// Created on first use, then kept current by the body callbacks: bytes
    /// sent for upload tasks, bytes received otherwise (-1 total: unknown).
    var progress: Progress {
        guarded.withLock { $0.progressObject() }
    }

    func attach(owner: SessionTask) {
        guarded.withLock { $0.owner = owner }
    }

    // MARK: - Control

    func resume() {
        act(on: guarded.withLock { $0.pipeline.resume() })
    }

    /// Collects the body (or, for a download, the file) and resumes, under
    /// one lock acquisition (`data(for:)` and friends). Returns false,
    /// changing nothing, when the task was resumed before.
    @discardableResult
    func resumeCollecting() -> Bool {
        let limit = context.configuration.maximumCollectedBodySize
        let action = guarded.withLock { $0.resumeCollecting(limit: limit) }
        guard let action else { return false }
        act(on: action)
        return true
    }

    private func act(on action: TaskPipeline.ResumeAction) {
        switch action {
        case .startTransfer:
            log?.started(originalRequest, kind: initialKind)
            observation?.started()
            if let refusal {
                complete(error: refusal, metrics: nil)
                return
            }
            if retries.load(ordering: .relaxed) { RetryScheduling.noteFirstAttempt(on: self) }
            if initialKind == .download {
                startDownload()
            } else {
                startHop(originalRequest, credential: nil)
            }
        case .resumeTransfer:
            guarded.withLock({ $0.exchange })?.resume()
        case .none:
            break
        }
    }

    func suspend() {
        let (action, exchange) = guarded.withLock { $0.suspend() }
        if case .suspendTransfer = action, let exchange {
            exchange.suspend()
        }
    }

    func cancel() {
        // Apple's description of a cancelled task, word for word: legacy
        // code and test suites compare it.
        let error = URLError.make(.cancelled, url: failingURLString, reason: "cancelled")
        // A middleware the task waits for hears of it (its Swift task is
        // cancelled); the task ends now either way.
        if usesMiddleware.load(ordering: .relaxed) { guarded.withLock { $0.middleware.takeWaiting() }?.cancel() }
        let (action, exchange, wake, canceling) = guarded.withLock { $0.cancel(error: error) }
        if canceling { cancelRequested.store(true, ordering: .relaxed) }
        switch action {
        case .cancelTransfer(let dropped):
            _ = consume dropped  // released here, after the lock
            if let exchange {
                exchange.cancel(error: error)
            } else {
                // No transfer runs (a decision is pending between hops, or
                // the first hop waits for a body stream): nothing will report
                // the end, so it is reported here, with the hops' metrics.
                completeWithTransactions(error: error)
            }
        case .finishWithoutTransfer:
            observeEnd(error: error)
            finishDownload(error: error) { _ in }
            finished(waking: wake)
        case .none:
            break
        }
    }

    /// `ResponseDecision.cancel()`: as `cancel()`, and also when the body
    /// already arrived whole and only waits in the queue for the consumer.
    func cancelAfterResponse() {
        let error = URLError.make(.cancelled, url: failingURLString, reason: "cancelled")
        let dropped = guarded.withLock { $0.pipeline.cancelDeliveredResponse(error: error) }
        // Released here, after the lock (see `TaskPipeline.CancelAction`).
        if dropped == nil { cancel() }
    }

    /// Whether the body is collected for `collect()` (not delivered as events).
    var collectsBody: Bool {
        guard kind != .download else { return false }
        return guarded.withLock { $0.collectsBody }
    }

    /// Makes `collect()` the consumer. Must be called before `resume()`.
    /// Not for a download task (its body goes to a file).
    @discardableResult
    func useCollectingConsumer() -> Bool {
        let limit = context.configuration.maximumCollectedBodySize
        guard kind != .download else { return false }
        return guarded.withLock { $0.pipeline.collectBody(limit: limit) }
    }

    // MARK: - Consumers

    /// What a pull finds without waiting.
    enum ReadyPull {
        case event(TaskEvent)
        case end
        /// Nothing queued: `waitForNextEvent()`.
        case mustWait
    }

    /// The next event for `task.events`; nil at the end. Cancelling the calling
    /// Swift task cancels the transfer.
    func nextEvent() async throws -> TaskEvent? {
        switch try pullIfReady() {
        case .event(let event): return event
        case .end: return nil
        case .mustWait: return try await waitForNextEvent()
        }
    }

    /// The part of a pull that never suspends: settles what the previous
    /// event handed out, then takes a queued event or the end. A plain
    /// function, so that `task.events` hands out a ready event (most of
    /// them: a small response's body and metrics come with it) without
    /// entering another async function, which cost a task allocation and an
    /// executor check per event.
    func pullIfReady() throws -> ReadyPull {
        if Task.isCancelled { cancel() }
        // The decision handed out with the previous event takes its default
        // now, and a downloaded file it handed out goes unless it was moved.
        // Both are settled outside the lock, before the next event is looked
        // at (a default can queue events). Most pulls have neither; they
        // take the lock once.
        let pull = guarded.withLock { $0.pull() }
        pull.outstanding?.settleWithDefault()
        if let handedOutFile = pull.handedOutFile { unlink(handedOutFile.path) }

        // An event already queued (a consumer behind the network) is taken
        // without a continuation or a cancellation handler: registering
        // both and resuming at once was about 7% of a streamed 1 MiB body's
        // CPU, per event.
        // A pull whose settling may have queued something (another
        // decision's default, a file deleted) looks again now; the others
        // looked under the first lock.
        let ready = pull.looked ? pull.ready : guarded.withLock { $0.takeReadyEvent() }
        guard let (action, exchange) = ready else { return .mustWait }
        switch action {
        case .deliver(let event, let resumeReceiving):
            if resumeReceiving, let exchange { exchange.resumeReceiving() }
            return .event(event)
        case .finishStream:
            consumerSawEnd.store(true, ordering: .relaxed)
            return .end
        case .failStream(let error):
            consumerSawEnd.store(true, ordering: .relaxed)
            throw error
        case .wait:
            return .mustWait
        }
    }

    /// The rest of a pull that found nothing ready: parks until the engine
    /// hands over the next event or the end.
    func waitForNextEvent() async throws -> TaskEvent? {
        let event = try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<TaskEvent?, any Error>) in
                let parked = guarded.withLock { $0.parkEventConsumer(continuation, failingURL: failingURLString) }
                let (action, exchange, beforeBody) = (parked.action, parked.exchange, parked.beforeBody)
                switch action {
                case .deliver(let event, let resumeReceiving):
                    if resumeReceiving, let exchange { exchange.resumeReceiving() }
                    continuation.resume(returning: event)
                case .finishStream:
                    continuation.resume(returning: nil)
                case .failStream(let error):
                    continuation.resume(throwing: error)
                case .wait:
                    if let exchange, beforeBody { waitInlineBeforeBody(on: exchange) { !$0.waiters.isEventConsumerParked } }
                }
            }
        } onCancel: {
            self.cancel()
        }
        // A cancelled consumer gets the cancellation as an error, not a quiet
        // end: AsyncThrowingStream(unfolding:) would otherwise finish normally.
        if Task.isCancelled, event != nil {
            throw error ?? URLError.make(.cancelled, url: failingURLString, reason: "cancelled")
        }
        return event
    }

    /// Calls `callback` once the collecting task ends: at once if it has, else
    /// on the engine thread at the end of the turn that ended it (so it must
    /// only hand off). Then `takeCollectedResult()` gives the outcome. For
    /// the classic completion handler, which needs no Swift task to wait.
    func whenCollectionEnds(_ callback: @escaping @Sendable () -> Void) {
        let ended = guarded.withLock { $0.callWhenCollectionEnds(callback) }
        if ended { callback() }
    }

    /// The body and response of a collecting task that ended, or its error.
    /// Foundation's response is built here, on the consumer's thread, not on
    /// the engine thread (see ResponseSource).
    func takeCollectedResult() -> Result<(Data, HTTPURLResponse), URLError> {
        let handed = guarded.withLock { $0.takeCollectedIfEnded() }
        guard let handed else {
            return .failure(URLError.make(
                .unknown, url: failingURLString, reason: "takeCollectedResult() was called before the task ended."))
        }
        return handed.flatMap(collectedResult)
    }

    /// The body and Foundation's response (built here, on the consumer's
    /// thread) of a collection that ended well.
    private func collectedResult(_ handed: CollectedHandOff) -> Result<(Data, HTTPURLResponse), URLError> {
        guard let response = handed.source?.response else {
            return .failure(URLError.make(
                .badServerResponse, url: failingURLString, reason: "The transfer ended without a response."))
        }
        return .success((handed.body, response))
    }

    /// Waits for the whole body (after `resumeCollecting()`, or
    /// `useCollectingConsumer()` and `resume()`).
    func collect() async throws -> (Data, HTTPURLResponse) {
        if Task.isCancelled { cancel() }
        let handed = try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<CollectedHandOff, any Error>) in
                let (end, exchange) = guarded.withLock { $0.parkCollector(continuation) }
                if let end {
                    continuation.resume(with: end)
                } else if let exchange {
                    waitInlineBeforeBody(on: exchange) { !$0.waiters.isCollectorParked }
                }
            }
        } onCancel: {
            self.cancel()
        }
        return try collectedResult(handed).get()
    }

    /// The collected body and the response it answers (see
    /// `TaskMachine.takeCollected`).
    struct CollectedHandOff {
        let body: Data
        let source: ResponseSource?
    }

    // MARK: - Ending

    /// The span ends and the metrics are recorded (once: see
    /// `TaskObservation.ended`).
    func observeEnd(error: URLError?) {
        guard let observation else { return }
        let (sent, received, redirects) = guarded.withLock { $0.endCounts }
        observation.ended(error: error, bytesSent: sent, bytesReceived: received, redirects: redirects)
    }

    func complete(error: URLError?, metrics: TaskMetrics?) {
        if let log {
            log.ended(
                error: error, bytesReceived: countOfBytesReceived, seconds: Date().timeIntervalSince(createdAt))
        }
        observeEnd(error: error)
        // Written before the consumer hears of the end (see HARRecorder).
        har?.taskEnded(metrics: metrics, error: error)
        finished(waking: guarded.withLock { $0.finish(error: error, metrics: metrics, originalURL: originalRequest.url) })
    }

    /// After the task ended (in the machine): `hasEnded` says so from now
    /// on, the session lets the task go, its consumer wakes.
    func finished(waking wake: Wake?) {
        ended.store(true, ordering: .releasing)
        context.unregister(identifier)
        wake?.run(by: self)
    }

    /// Ends the task with the metrics collected over all hops (a download's
    /// file is finished first: `downloaded`, or kept with resume data).
    func completeWithTransactions(error: URLError?) {
        finishDownload(error: error) { [self] error in
            let (transactions, redirectCount, readable) = guarded.withLock { $0.transactionsForMetrics }
            guard readable else {
                complete(error: error, metrics: nil)
                return
            }
            complete(error: error, metrics: makeMetrics(transactions, redirectCount: redirectCount))
        }
    }

    /// The task's metrics from its hops' transactions (outside the lock:
    /// converting builds Foundation's responses).
    func makeMetrics(_ transactions: [PendingTransaction], redirectCount: Int) -> TaskMetrics {
        // Converted in place: mapping with a key path copied each
        // pending transaction (its request, response and metrics) first.
        var converted: [TransactionMetrics] = []
        converted.reserveCapacity(transactions.count)
        for index in transactions.indices { converted.append(transactions[index].transactionMetrics) }
        return TaskMetrics(
            taskInterval: DateInterval(start: createdAt, end: max(Date(), createdAt)),
            redirectCount: redirectCount,
            transactionMetrics: converted)
    }
}
