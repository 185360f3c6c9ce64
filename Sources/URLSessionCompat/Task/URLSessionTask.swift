import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One request for one resource, as Apple's `URLSessionTask`. It starts
/// suspended; `resume()` starts it. Its state and counters are the core
/// task's; its delegate calls come from the session's driver.
open class URLSessionTask: NSObject, NSCopying, ProgressReporting, @unchecked Sendable {
    // @unchecked: `model`, `transfer` and the identifiers are immutable and
    // Sendable; the rest is in `guarded`, behind a lock.
    /// What the public properties read: the core task of a data, upload or
    /// download task, or a WebSocket or stream task's own model.
    let model: any ClassicTaskModel
    /// The core task of a data, upload or download task; nil for WebSocket
    /// and stream tasks, which run over a connection of the core instead.
    private let transfer: SessionTask?
    private let identifier: Int
    /// Strong, as Apple's: a session nobody holds lives on while it has a
    /// task (its registry holds the task until the completion is delivered,
    /// which ends the cycle), so `URLSession(...).dataTask(...).resume()`
    /// with nothing stored still runs and calls its delegate.
    let session: URLSession?
    private let guarded: Mutex<Guarded>
    /// Where the result goes: the delegate, or a completion handler. Fixed
    /// when the task is made, so read without the lock.
    private let completion: TaskDriver.Completion

    struct Guarded {
        var delegate: (any URLSessionTaskDelegate)?
        /// Whether `resume()` ran once (the driver starts then).
        var started = false
        /// Set on a data task that became a download: it is over.
        var handedOver = false
        /// `cancel()` was called: no more waiting for this task's delegate.
        var cancelRequested = false
        /// Its driver runs and has not delivered the completion yet: until
        /// it has, a task the core has ended reads `.canceling` (cancelled)
        /// or `.running`, as Apple's, never `.completed`.
        var completionPending = false
        /// Resumes the driver if it waits on this task's delegate.
        var pendingAnswer: (@Sendable () -> Void)?
        var earliestBeginDate: Date?
        var countOfBytesClientExpectsToSend: Int64 = -1
        var countOfBytesClientExpectsToReceive: Int64 = -1
        /// A streamed upload's `httpBodyStream`, used once when the delegate
        /// does not implement `needNewBodyStream`.
        var initialBodyStream: StreamBox?
        /// The lane of the delegate queue this task's calls run on, when one
        /// was made at creation (for `didCreateTask`).
        var lane: DelegateQueue?
        /// nil until set: then Apple's default (see the property).
        var prefersIncrementalDelivery: Bool?
        var reportsProgressToTaskDelegate = false
    }

    public static let defaultPriority: Float = 0.5
    public static let lowPriority: Float = 0.25
    public static let highPriority: Float = 0.75

    public enum State: Int, Sendable {
        case running
        case suspended
        case canceling
        case completed
    }

    /// - Parameter completion: where the result goes, fixed when the task
    ///   is made (the delegate, or a completion handler).
    init(
        core: SessionTask, identifier: Int, session: URLSession?, started: Bool,
        completion: TaskDriver.Completion = .delegate
    ) {
        self.model = core
        self.transfer = core
        self.identifier = identifier
        self.session = session
        // Made with `started`, not set after: one lock acquisition per task less.
        guarded = Mutex(Guarded(started: started))
        self.completion = completion
        super.init()
    }

    /// A WebSocket or stream task: no core task, no driver; its class
    /// overrides `resume`, `suspend` and `cancel`.
    init(model: any ClassicTaskModel, identifier: Int, session: URLSession?) {
        self.model = model
        self.transfer = nil
        self.identifier = identifier
        self.session = session
        guarded = Mutex(Guarded())
        completion = .delegate
        super.init()
    }

    /// The core task under a data, upload or download task. Only their
    /// paths read it (the drivers, the collecting shortcut, the methods
    /// that WebSocket and stream tasks override).
    var core: SessionTask {
        guard let transfer else { preconditionFailure("A WebSocket or stream task has no core transfer task.") }
        return transfer
    }

    /// The core task's identifier, for data, upload and download tasks.
    var coreTaskIdentifier: Int? { transfer?.taskIdentifier }

    /// A task is one object: copying gives the same task, as Apple's.
    open override func copy() -> Any { self }
    open func copy(with zone: NSZone? = nil) -> Any { self }

    /// Unique among the tasks of its session.
    open var taskIdentifier: Int { identifier }
    open var originalRequest: URLRequest? { model.originalRequest }
    open var currentRequest: URLRequest? { model.currentRequest }
    open var response: URLResponse? { model.response }
    /// The error the task completed with; nil while running or on success.
    open var error: (any Error)? { model.error }
    open var countOfBytesReceived: Int64 { model.countOfBytesReceived }
    open var countOfBytesSent: Int64 { model.countOfBytesSent }
    open var countOfBytesExpectedToSend: Int64 { model.countOfBytesExpectedToSend }
    open var countOfBytesExpectedToReceive: Int64 { model.countOfBytesExpectedToReceive }
    open var progress: Progress { model.progress }

    open var state: State {
        let (handedOver, pending, cancelled) = guarded.withLock {
            ($0.handedOver, $0.completionPending, $0.cancelRequested)
        }
        if handedOver { return .completed }
        let state = model.classicState
        // The core ends first; the completion reaches the delegate or the
        // handler later, on the delegate queue.
        if pending, state == .completed { return cancelled ? .canceling : .running }
        return state
    }

    open var priority: Float {
        get { model.priority }
        set { model.priority = newValue }
    }

    open var taskDescription: String? {
        get { model.taskDescription }
        set { model.taskDescription = newValue }
    }

    /// This task's own delegate: asked before the session's for each call it
    /// implements.
    open var delegate: (any URLSessionTaskDelegate)? {
        get { guarded.withLock { $0.delegate } }
        set { guarded.withLock { $0.delegate = newValue } }
    }

    /// Accepted; there is no scheduler for deferred starts: resume when you
    /// want the task to start.
    open var earliestBeginDate: Date? {
        get { guarded.withLock { $0.earliestBeginDate } }
        set { guarded.withLock { $0.earliestBeginDate = newValue } }
    }

    /// Whether a delegate gets the body in pieces as it arrives (true, the
    /// default) or in one `didReceive data` call with the whole body once
    /// it is in (false, as Apple). Tasks that deliver to a completion
    /// handler collect the body whatever this says, so for them and for
    /// download tasks it reads false unless set, as Apple's. Set it before
    /// `resume()`.
    open var prefersIncrementalDelivery: Bool {
        get {
            guarded.withLock { guarded in
                if let set = guarded.prefersIncrementalDelivery { return set }
                guard case .delegate = completion else { return false }
                return !(self is URLSessionDownloadTask)
            }
        }
        set { guarded.withLock { $0.prefersIncrementalDelivery = newValue } }
    }

    /// Accepted, informational only.
    open var countOfBytesClientExpectsToSend: Int64 {
        get { guarded.withLock { $0.countOfBytesClientExpectsToSend } }
        set { guarded.withLock { $0.countOfBytesClientExpectsToSend = newValue } }
    }

    open var countOfBytesClientExpectsToReceive: Int64 {
        get { guarded.withLock { $0.countOfBytesClientExpectsToReceive } }
        set { guarded.withLock { $0.countOfBytesClientExpectsToReceive = newValue } }
    }

    /// Starts the task, or continues a suspended one.
    open func resume() {
        // The first resume decides, from what one lock acquisition reads,
        // how the core runs the task (see `collectIfNobodyListens` and
        // `offerTLSChallengesIfAsked`); later ones only resume.
        let handlerOnly: Bool
        switch completion {
        case .data, .awaitedByCaller: handlerOnly = true
        case .delegate, .download, .bytes: handlerOnly = false
        }
        let first = guarded.withLock { guarded -> (taskDelegate: Bool, handlerOnly: Bool)? in
            guard !guarded.started else { return nil }
            return (guarded.delegate != nil, handlerOnly)
        }
        var collecting = false
        if let first, let session {
            let sessionHasDelegate = session.createdWithDelegate
            collecting = collectIfNobodyListens(first, sessionHasDelegate: sessionHasDelegate)
            offerTLSChallengesIfAsked(first, sessionHasDelegate: sessionHasDelegate, in: session)
        }
        core.resume()
        startDriverOnce(collecting: collecting)
    }

    /// A completion-handler data or upload task with no delegate to tell
    /// anything needs no per-chunk events: the core collects the body as
    /// `data(for:)` does, and the handler gets it at the end (W1-c64 on the
    /// classic API: see the commit that added this). Redirects and
    /// challenges then get the defaults, which is what a missing delegate
    /// means. Decided at the first resume, before the transfer starts.
    private func collectIfNobodyListens(
        _ first: (taskDelegate: Bool, handlerOnly: Bool), sessionHasDelegate: Bool
    ) -> Bool {
        first.handlerOnly && !first.taskDelegate && !sessionHasDelegate && core.collectBody()
    }

    /// As Apple: a delegate's challenge method hears server trust for each
    /// new TLS connection. Without a delegate nobody is asked, and a session
    /// delegate found not to implement either challenge method is not asked
    /// again (each ask costs a handshake: see `SessionConfiguration.offersTLSChallenges`).
    private func offerTLSChallengesIfAsked(
        _ first: (taskDelegate: Bool, handlerOnly: Bool), sessionHasDelegate: Bool, in session: URLSession
    ) {
        let offers = first.taskDelegate || (sessionHasDelegate && session.delegateMayAnswerTLSChallenges)
        if offers != core.offersTLSChallenges { core.offersTLSChallenges = offers }
    }

    /// Pauses the transfer until `resume()`.
    open func suspend() { core.suspend() }

    /// Ends the task with `URLError(.cancelled)`, also while its delegate has
    /// not answered a question yet.
    open func cancel() {
        markCancelRequested()
        core.cancel()
        abandonPendingAnswer()
        // A task cancelled before it ever ran still reports its completion.
        startDriverOnce(collecting: false)
    }

    /// For `cancel(byProducingResumeData:)`, which lives in a subclass.
    func startDriverOnceForCancel() { startDriverOnce(collecting: false) }

    /// - Parameter collecting: the first resume made the core collect the
    ///   body (`collectIfNobodyListens`): the driver starts from it.
    private func startDriverOnce(collecting: Bool) {
        let first = guarded.withLock { guarded -> Bool in
            guard !guarded.started else { return false }
            guarded.started = true
            if transfer != nil, session != nil { guarded.completionPending = true }
            return true
        }
        if first { session?.startDriver(for: self, completion: completion, collecting: collecting) }
    }

    /// For the session's factories (inherited by every task class).
    convenience init(core: SessionTask, identifier: Int, session: URLSession) {
        self.init(core: core, identifier: identifier, session: session, started: false)
    }

    convenience init(core: SessionTask, identifier: Int, session: URLSession, completion: TaskDriver.Completion) {
        self.init(core: core, identifier: identifier, session: session, started: false, completion: completion)
    }

    // MARK: - Driver support

    /// The driver registers how to stop waiting for this task's delegate.
    func setPendingAnswer(_ abandon: (@Sendable () -> Void)?) {
        // A cancel() that ran before registration found nothing to abandon.
        let cancelled = guarded.withLock { guarded -> Bool in
            guarded.pendingAnswer = abandon
            return guarded.cancelRequested
        }
        if cancelled { abandon?() }
    }

    func markCancelRequested() {
        guarded.withLock { $0.cancelRequested = true }
    }

    func abandonPendingAnswer() {
        let abandon = guarded.withLock { guarded -> (@Sendable () -> Void)? in
            defer { guarded.pendingAnswer = nil }
            return guarded.pendingAnswer
        }
        abandon?()
    }

    /// The completion is being delivered (or the task was handed over to
    /// `bytes(for:)`): from now on the state is the core's.
    func markCompletionDelivered() {
        guarded.withLock { $0.completionPending = false }
    }

    /// A data task that became a download task is over.
    func markHandedOver() {
        guarded.withLock { $0.handedOver = true }
    }

    func setInitialBodyStream(_ stream: InputStream?) {
        let box = stream.map(StreamBox.init)
        guarded.withLock { $0.initialBodyStream = box }
    }

    func takeInitialBodyStream() -> StreamBox? {
        guarded.withLock { guarded in
            defer { guarded.initialBodyStream = nil }
            return guarded.initialBodyStream
        }
    }

    /// Set by the async calls (`data(for:delegate:)`, `download(for:delegate:)`,
    /// ...): their delegate hears `didReceive data` and `didWriteData` as a
    /// progress hook, as FoundationNetworking's does, although the result
    /// still comes back whole. Completion-handler tasks leave it off (as
    /// Apple: no data-delivery calls for them).
    var reportsProgressToTaskDelegate: Bool {
        get { guarded.withLock { $0.reportsProgressToTaskDelegate } }
        set { guarded.withLock { $0.reportsProgressToTaskDelegate = newValue } }
    }

    /// The task's lane, made now if it has none (atomically: calls posted
    /// from two threads at once still share one lane).
    func laneMakingIt(with make: () -> DelegateQueue) -> DelegateQueue {
        guarded.withLock { guarded in
            if let lane = guarded.lane { return lane }
            let lane = make()
            guarded.lane = lane
            return lane
        }
    }

    var lane: DelegateQueue? {
        get { guarded.withLock { $0.lane } }
        set { guarded.withLock { $0.lane = newValue } }
    }}

/// A task whose body arrives in memory, as Apple's `URLSessionDataTask`.
// @unchecked: adds no state to URLSessionTask.
open class URLSessionDataTask: URLSessionTask, @unchecked Sendable {}

/// A data task that sends a body, as Apple's `URLSessionUploadTask`.
// @unchecked: adds no state to URLSessionTask.
open class URLSessionUploadTask: URLSessionDataTask, @unchecked Sendable {}

/// A task whose body goes to a file, as Apple's `URLSessionDownloadTask`.
// @unchecked: adds no state to URLSessionTask.
open class URLSessionDownloadTask: URLSessionTask, @unchecked Sendable {
    /// Stops the download and hands back resume data for
    /// `downloadTask(withResumeData:)`, or nil when it cannot be resumed (no
    /// ETag or Last-Modified from the server, nothing received, already
    /// ended). The task then completes with `URLError(.cancelled)`.
    open func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void) {
        let core = core
        markCancelRequested()
        Task {
            let data = await core.cancelByProducingResumeData()
            self.abandonPendingAnswer()
            // A task cancelled before it ever ran still reports its completion.
            self.startDriverOnceForCancel()
            completionHandler(data)
        }
    }
}
