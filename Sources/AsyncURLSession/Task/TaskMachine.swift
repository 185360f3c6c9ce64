internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A task's state: everything behind `TaskCore`'s one lock. The sub-machines
/// (pipeline, hop, history, waiters, publication, download, multipart,
/// retries, middleware) own their fields; the transitions that span several
/// of them are this type's methods (here and in `TaskMachine+*.swift`), each
/// one input of the task (an engine callback, a pull, an answer, a control
/// call) returning what the driver, `TaskCore`, carries out after the lock.
/// A value type: it calls no handler and wakes no one itself.
struct TaskMachine: ~Copyable {
    var pipeline: TaskPipeline
    var hop: HopState
    /// Whoever answers the current hop (`HopExchange`: the engine, or a
    /// responder that is not the network); nil between hops.
    private(set) var exchange: (any HopExchange)?
    /// The current hop's id: callbacks of a hop the task has left are
    /// told from the current one by it.
    var transferID: HopID? { exchange?.id }
    /// Redirects, transactions and authentication of the hops so far.
    var history = HopHistory()
    /// Who waits for the task's consumer side, and what the last hand-off
    /// left open until the next pull.
    var waiters = ConsumerWaiters()
    var progress: Progress?
    var taskDescription: String?
    var priority: Float = 0.5
    /// TLS-challenge and proxy answers: rare, so kept in a box made on
    /// first write (see `TaskConnectionState`); a task that never needs
    /// them pays one pointer. Read it here; change it through `connection()`.
    private(set) var connectionState: TaskConnectionState? = nil
    /// The box of TLS-challenge and proxy answers, made on first use.
    mutating func connection() -> TaskConnectionState {
        if let state = connectionState { return state }
        let state = TaskConnectionState()
        connectionState = state
        return state
    }
    /// The public task, for handler calls. Weak: the task owns this core.
    weak var owner: SessionTask?
    /// The final response while handlers decide on it, and a hop end
    /// that waits for it to be published.
    var publication = ResponsePublication()
    /// Tries made while waiting for connectivity (`waitsForConnectivity`).
    var connectivity = ConnectivityRetry()
    /// The task's retry policy and its retries so far; nil without one.
    var retry: RetryState?
    /// The task's own middleware, its attempts, and the one it waits for.
    var middleware = MiddlewareState()
    /// `SessionTask.unixSocket`, read only while `ownUnixSocketSet` is.
    var ownUnixSocket: UnixSocket?
    /// The request's own httpBodyStream was sent once; re-sends ask for a new one.
    private var usedRequestBodyStream = false
    /// Set for download tasks (from the start, or after `becomeDownload`).
    /// Begun by `writeBody(to:)`, then changed by its own transitions.
    var download: DownloadState?
    /// Set while a multipart/x-mixed-replace body is split into parts
    /// (`splitBody(into:)`).
    var multipart: MultipartState?
    /// `cancelByProducingResumeData()` callers waiting for the end.
    var resumeData = ResumeDataRequests()

    /// An upload task's progress counts bytes sent (until it becomes a
    /// download); every other task's, bytes received.
    private let isUploadTask: Bool
    /// Someone reads the metrics whatever the consumer (a handler, a HAR
    /// recorder); else only an events consumer does.
    private let metricsReadByHandlers: Bool

    init(pipeline: TaskPipeline, hop: HopState, retry: RetryState?, isUploadTask: Bool, metricsReadByHandlers: Bool) {
        self.pipeline = pipeline
        self.hop = hop
        self.retry = retry
        self.isUploadTask = isUploadTask
        self.metricsReadByHandlers = metricsReadByHandlers
    }

    /// Whether anyone can ever read this task's metrics. data(for:) and
    /// friends without handlers never show the task to anyone, so then the
    /// metrics are neither read from libcurl, nor recorded per hop, nor built.
    var metricsReadable: Bool {
        metricsReadByHandlers || pipeline.consumer == .events
    }

    /// The task's `Progress`, made on first use (up to date: nobody else
    /// holds it yet, so setting it here tells nobody under the lock).
    mutating func progressObject() -> Progress {
        if let progress { return progress }
        let made = Progress(totalUnitCount: -1)
        progress = made
        progressUpdate()?.apply()
        return made
    }

    /// What brings the Progress object (if anyone asked for it) up to the
    /// counters, applied by the driver after the lock: a Progress's setters
    /// take its own lock and tell its parent, which is not work for the
    /// task's lock. Updates of one task come from one thread at a time (its
    /// transport's), so they are applied in order.
    func progressUpdate() -> ProgressUpdate? {
        guard let progress else { return nil }
        if isUploadTask, download == nil {
            return ProgressUpdate(progress: progress, total: pipeline.bytesExpectedToSend, completed: pipeline.bytesSent)
        }
        return ProgressUpdate(
            progress: progress, total: pipeline.bytesExpectedToReceive, completed: pipeline.bytesReceived)
    }

    // MARK: Transitions of the task's own fields

    /// A hop starts (the pipeline agreed): its state, and who answers it.
    mutating func beginHop(_ hop: HopState, via exchange: any HopExchange, expectedToSend: Int64) {
        self.hop = hop
        self.exchange = exchange
        pipeline.startedSending(expected: expectedToSend)
    }

    /// Hop `id` ended: its exchange if `id` is the current hop (which
    /// then has none), nil for a hop the task has left.
    mutating func endHop(_ id: HopID) -> (any HopExchange)? {
        guard let current = exchange, current.id == id else { return nil }
        exchange = nil
        pipeline.hopEnded()
        return current
    }

    /// The body goes to a file from now on (a download task's first
    /// hop, or a data task's `becomeDownload`).
    mutating func writeBody(to download: DownloadState) {
        self.download = download
    }

    /// The body is split into x-mixed-replace parts from now on.
    mutating func splitBody(into parts: MultipartState) {
        multipart = parts
    }

    /// The task ends: no exchange answers it any more, and the hop's
    /// cache stage (which holds the task) goes.
    mutating func taskEnded() {
        exchange = nil
        hop.leaveCacheStage()
    }

    /// Whether the request's own httpBodyStream is unused (it serves the
    /// first send only); it counts as used from now on.
    mutating func takeFirstUseOfRequestBodyStream() -> Bool {
        defer { usedRequestBodyStream = true }
        return !usedRequestBodyStream
    }
}

extension TaskMachine {
    /// `cancel()`: the pipeline's answer, the exchange to stop, the consumer
    /// to wake when no transfer is left to report the end, and whether the
    /// pipeline is cancelling now (the driver flags it for `launchHop`).
    mutating func cancel(error: URLError) -> (TaskPipeline.CancelAction, (any HopExchange)?, Wake?, Bool) {
        let action = pipeline.cancel(error: error)
        guard case .finishWithoutTransfer(let end) = action else { return (action, exchange, nil, pipeline.isCanceling) }
        return (action, exchange, wake(for: end), pipeline.isCanceling)
    }

    /// A middleware's Swift task runs for the task: `cancel()` cancels it.
    /// True when the task was cancelled or ended already (cancel it now).
    mutating func middlewareRuns(_ running: Task<Void, Never>) -> Bool {
        middleware.waits(on: running)
        return pipeline.isCanceling || pipeline.end != nil
    }
}

extension TaskMachine {
    /// The task's last reference went away: the outstanding response
    /// decision and the undelivered events, released by the caller after
    /// the lock.
    mutating func takeUnconsumed() -> (ResponseDecision?, [TaskEvent]) {
        (waiters.takeOutstandingResponseDecision(), pipeline.takeUndelivered())
    }

    /// The files the task leaves behind when it goes: a downloaded file
    /// nobody pulled past, or a download never finished (kept when resume
    /// data was asked for).
    func filesLeftBehind() -> (handedOut: URL?, unfinished: DownloadFile?) {
        (waiters.fileToDeleteOnNextPull, resumeData.isWanted ? nil : download?.file)
    }

    /// `data(for:)` and friends: the body is collected, and the task resumes;
    /// nil (nothing changed) when it was resumed before.
    mutating func resumeCollecting(limit: Int) -> TaskPipeline.ResumeAction? {
        guard pipeline.collectBody(limit: limit) else { return nil }
        return pipeline.resume()
    }

    /// Whether the body is collected for `collect()`.
    var collectsBody: Bool {
        if case .collect = pipeline.consumer { return true }
        return false
    }

    /// What the task's span records at its end.
    var endCounts: (sent: Int64, received: Int64, redirects: Int) {
        (pipeline.bytesSent, pipeline.bytesReceived, history.redirectCount)
    }

    /// The hops' transactions for the task's metrics, if anyone reads them.
    var transactionsForMetrics: (transactions: [PendingTransaction], redirectCount: Int, readable: Bool) {
        (history.transactions, history.redirectCount, metricsReadable)
    }

    /// Makes the exchange `make` returns the task's current hop, if the task
    /// still wants one: nil when it does not (cancelled meanwhile), else the
    /// exchange and whether the task is suspended (the exchange then starts
    /// suspended). `make` runs only for a hop that starts.
    mutating func beginHopIfWanted<Exchange: HopExchange>(
        _ hop: HopState, expectedToSend: Int64, making make: () -> Exchange
    ) -> (exchange: Exchange, suspended: Bool, metricsReadable: Bool)? {
        guard pipeline.hopStarting() else { return nil }
        let exchange = make()
        beginHop(hop, via: exchange, expectedToSend: expectedToSend)
        return (exchange, pipeline.state == .suspended, metricsReadable)
    }

    /// `beginHopIfWanted` for an exchange made already: nil when the task
    /// wants no hop, else whether it is suspended.
    mutating func beginHopIfWanted(_ hop: HopState, via exchange: any HopExchange, expectedToSend: Int64) -> Bool? {
        guard pipeline.hopStarting() else { return nil }
        beginHop(hop, via: exchange, expectedToSend: expectedToSend)
        return pipeline.state == .suspended
    }

    /// A download's file and response, once it was handed out.
    var downloadedFile: (URL, HTTPURLResponse)? {
        guard let url = download?.finishedURL, let response = pipeline.response else { return nil }
        return (url, response)
    }
}

/// A task's `Progress` brought up to its counters (`TaskMachine.progressUpdate`).
struct ProgressUpdate {
    let progress: Progress
    let total: Int64
    let completed: Int64

    func apply() {
        progress.totalUnitCount = total
        progress.completedUnitCount = completed
    }
}
