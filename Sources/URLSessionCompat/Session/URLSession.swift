// The adapters' SPI: what only an adapter of the classic API needs (see AsyncURLSession's Adapters.md).
@_spi(Adapters) import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The classic session, as Apple's `URLSession`, running on an
/// AsyncURLSession `Session`. Tasks start suspended; delegate calls run on
/// `delegateQueue`, one at a time per task, in the order of SPEC §3.
open class URLSession: NSObject, @unchecked Sendable {
    // @unchecked: the stored `let`s are Sendable or immutable references used
    // only through their thread-safe API (OperationQueue); the mutable state
    // is in `guarded`, behind a lock.

    /// The async core session under this one. Move calls to it one at a time
    /// (`import AsyncURLSession`); it shares this session's connections. Its
    /// `streamBufferHighWatermark` is half the configured one (see
    /// `StreamBufferSplit`). (`shared`'s is the async core's
    /// `Session.shared`, with its own settings.)
    public let asyncSession: Session
    private let configurationCopy: URLSessionConfiguration
    public let delegateQueue: OperationQueue
    /// The lane completion handlers of tasks without a delegate share on a
    /// serial delegate queue (see `startDriver`).
    private let completionLane: DelegateQueue
    /// The body bytes a task's lane may have posted ahead of its delegate.
    private let postedByteLimit: Int
    private let isShared: Bool
    /// Whether the session was made with a delegate, read without the lock
    /// by every task's first `resume()`. The delegate itself is let go only
    /// after the session's invalidation, when no task can run any more.
    let createdWithDelegate: Bool
    private let guarded: Mutex<Guarded>

    struct Guarded {
        var delegate: (any URLSessionDelegate)?
        /// The delegate was asked a server-trust challenge and implements
        /// neither challenge method.
        var delegateIgnoresTLSChallenges = false
        var registry = TaskRegistry<URLSessionTask>()
        var sessionDescription: String?
        /// Who waits for a task's completion to be delivered (background
        /// sessions' `urlSessionDidFinishEvents`), by task identifier.
        var deliveryWaiters: [Int: [CheckedContinuation<Void, Never>]] = [:]
    }

    /// Shares the async core's shared session. It cannot be invalidated.
    open class var shared: URLSession { sharedSession }

    private static let sharedSession = URLSession(shared: ())

    private init(shared: Void) {
        configurationCopy = URLSessionConfiguration.default
        // A core session of its own, not `Session.shared`: registered
        // URLProtocol classes must be able to answer its requests.
        let coreConfiguration = configurationCopy.sessionConfiguration
        let tasks = ClassicTaskLookup()
        asyncSession = Session(configuration: Self.coreConfiguration(configurationCopy, tasks: tasks))
        delegateQueue = Self.serialQueue()
        postedByteLimit = StreamBufferSplit.postedByteLimit(coreConfiguration)
        completionLane = DelegateQueue(queue: delegateQueue, postedByteLimit: postedByteLimit)
        isShared = true
        createdWithDelegate = false
        guarded = Mutex(Guarded())
        super.init()
        tasks.attach(self)
    }

    public convenience init(configuration: URLSessionConfiguration) {
        self.init(configuration: configuration, delegate: nil, delegateQueue: nil)
    }

    /// The configuration is copied. With a nil queue, a serial queue is made.
    /// The session keeps `delegate` until it is invalidated: call
    /// `finishTasksAndInvalidate` or `invalidateAndCancel` when done.
    public init(
        configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?,
        delegateQueue queue: OperationQueue?
    ) {
        // swift-format-ignore: a forced cast; `copy(with:)` returns Self's type.
        configurationCopy = configuration.copy() as? URLSessionConfiguration ?? configuration
        let coreConfiguration = configurationCopy.sessionConfiguration
        let tasks = ClassicTaskLookup()
        asyncSession = Session(configuration: Self.coreConfiguration(configurationCopy, tasks: tasks))
        delegateQueue = queue ?? Self.serialQueue()
        postedByteLimit = StreamBufferSplit.postedByteLimit(coreConfiguration)
        completionLane = DelegateQueue(queue: delegateQueue, postedByteLimit: postedByteLimit)
        isShared = false
        createdWithDelegate = delegate != nil
        guarded = Mutex(Guarded(delegate: delegate))
        super.init()
        tasks.attach(self)
        takeUpBackgroundTasks()
    }

    /// The core session's configuration: the stream buffer split with the
    /// delegate queue, and the URLProtocol classes as its local transport.
    private static func coreConfiguration(
        _ configuration: URLSessionConfiguration, tasks: ClassicTaskLookup
    ) -> SessionConfiguration {
        var core = StreamBufferSplit.coreConfiguration(configuration.sessionConfiguration)
        // Legacy code moves over from FoundationNetworking: its redirect
        // rules (305 and 306 followed, HEAD becomes GET on a 303).
        core.redirectsAsFoundationNetworking = true
        core.localTransport = ProtocolClassTransport(
            protocolClasses: configuration.protocolClasses, fallback: core.localTransport, tasks: tasks)
        return core
    }

    /// The live task whose core task has `identifier` (a URLProtocol's `task`).
    func task(withCoreIdentifier identifier: Int) -> URLSessionTask? {
        guarded.withLock { $0.registry.tasks.values.first { $0.coreTaskIdentifier == identifier } }
    }

    /// The queue a session makes when it is given none.
    ///
    /// Why a serial dispatch queue under it: corelibs' OperationQueue runs
    /// operations through a concurrent queue, on libdispatch's width-limited
    /// pool (as many threads as CPUs). On Linux that pool grows only when
    /// libdispatch's monitor sees its threads blocked, about one thread a
    /// second. Legacy handlers block: one that waits with a semaphore for
    /// another request holds a pool thread, and that request's handler waits
    /// for a thread in turn. Eight such handlers took 5 to 6 s to finish in a
    /// fresh process, in FoundationNetworking as here (Darwin's pool grows at
    /// once). A serial dispatch queue runs on the overcommitting pool, which
    /// starts a thread when every thread is blocked, as Darwin's does (see
    /// `SerialDelegateOperationQueue`).
    private static func serialQueue() -> OperationQueue {
        SerialDelegateOperationQueue()
    }

    /// A copy: changing it changes nothing in the session.
    open var configuration: URLSessionConfiguration {
        configurationCopy.copy() as? URLSessionConfiguration ?? configurationCopy
    }

    /// The delegate until invalidation has been reported, nil afterwards.
    open var delegate: (any URLSessionDelegate)? { guarded.withLock { $0.delegate } }

    /// Whether the session's delegate may answer server-trust challenges.
    var delegateMayAnswerTLSChallenges: Bool {
        guarded.withLock { $0.delegate != nil && !$0.delegateIgnoresTLSChallenges }
    }

    /// The delegate implements neither challenge method: stop asking it.
    func noteDelegateIgnoresTLSChallenges() {
        guarded.withLock { $0.delegateIgnoresTLSChallenges = true }
    }

    open var sessionDescription: String? {
        get { guarded.withLock { $0.sessionDescription } }
        set { guarded.withLock { $0.sessionDescription = newValue } }
    }

    /// The configuration as the driver reads it (not copied per call).
    var settings: URLSessionConfiguration { configurationCopy }

    /// A new in-order lane on the delegate queue (one per task driver).
    func makeDelegateLane() -> DelegateQueue { DelegateQueue(queue: delegateQueue, postedByteLimit: postedByteLimit) }

    // MARK: - Task registry

    /// Registers a new task around a core task. A session that was
    /// invalidated gets a task that fails when resumed (the core refuses it).
    private func register<T: URLSessionTask>(
        _ core: SessionTask, as make: (SessionTask, Int, URLSession, TaskDriver.Completion) -> T,
        completion: TaskDriver.Completion = .delegate
    ) -> T {
        register { identifier in make(core, identifier, self, completion) }
    }

    /// Registers the task `make` builds with a fresh identifier; a delegate
    /// hears `didCreateTask` first, on the task's own lane.
    func register<T: URLSessionTask>(_ make: (Int) -> T) -> T {
        let (task, delegate) = guarded.withLock { guarded -> (T, (any URLSessionDelegate)?) in
            let task = make(guarded.registry.makeIdentifier())
            _ = guarded.registry.add(task, identifier: task.taskIdentifier)
            return (task, guarded.delegate)
        }
        if let delegate = delegate as? any URLSessionTaskDelegate {
            // On the task's own lane, which its driver uses later: the call
            // comes before any other for this task.
            let lane = makeDelegateLane()
            task.lane = lane
            lane.post { delegate.urlSession(self, didCreateTask: task) }
        }
        return task
    }

    func replace(_ task: URLSessionTask, with download: URLSessionTask) {
        guarded.withLock {
            $0.registry.replace(task.taskIdentifier, with: download, identifier: download.taskIdentifier)
        }
    }

    func makeIdentifier() -> Int {
        guarded.withLock { $0.registry.makeIdentifier() }
    }

    /// - Parameters:
    ///   - completion: where the task's result goes, and `collecting`
    ///     whether its core collects the body, as the task's first start
    ///     read them.
    func startDriver(for task: URLSessionTask, completion: TaskDriver.Completion, collecting: Bool) {
        // Its caller awaits the core and delivers the end itself (`data(for:)`).
        // Its core collects the body from before the first resume, also
        // when the task is cancelled first.
        if case .awaitedByCaller = completion { return }
        if collecting, case .data(let handler) = completion {
            // The core collects the body and calls back at the end; the
            // handler then runs on the delegate queue. No Swift task waits
            // meanwhile: a driver task, its continuation and its wait for
            // the handler were about a tenth of a small request's CPU on
            // the classic API.
            // Such a task makes no other delegate call, so on a serial queue
            // (which runs handlers one at a time anyway) the handlers of all
            // tasks share one lane: handlers that complete together run in
            // one operation instead of an operation each. A concurrent
            // queue keeps one lane per task, so handlers may still overlap.
            let lane = delegateQueue.maxConcurrentOperationCount == 1 ? completionLane : makeDelegateLane()
            task.core.whenCollectionEnds { [self] in
                lane.post { [self] in
                    task.markCompletionDelivered()
                    switch task.core.takeCollectedResult() {
                    case .success(let (body, response)): handler(body, response, nil)
                    case .failure(let error): handler(nil, task.core.response, error)
                    }
                    taskDidCompleteWithoutWaiting(task)
                }
            }
            // Started from a handler on this lane (a chain of requests, as
            // legacy code makes them): the lane's operation may wait for it
            // before it ends, so its handler needs no new operation and no
            // thread woken for it (`SessionTask.waitInlineForCollection`).
            lane.waitBeforeIdling { task.core.waitInlineForCollection() }
            return
        }
        // The driver runs on its lane of the delegate queue (see
        // `DelegateQueue`): its delegate calls need no further hand-off.
        let lane = task.lane ?? makeDelegateLane()
        let driver = TaskDriver(session: self, task: task, completion: completion, queue: lane)
        Task(executorPreference: lane) { await driver.run() }
    }

    /// The task's completion has been delivered.
    func taskDidComplete(_ task: URLSessionTask) async {
        await perform(forget(task))
    }

    private func forget(_ task: URLSessionTask) -> TaskRegistry<URLSessionTask>.Action {
        let (action, waiters) = guarded.withLock { guarded in
            (guarded.registry.remove(task.taskIdentifier), guarded.deliveryWaiters.removeValue(forKey: task.taskIdentifier))
        }
        for waiter in waiters ?? [] { waiter.resume() }
        return action
    }

    /// Returns once task `identifier`'s completion was delivered (at once
    /// when it is not a live task of this session).
    func waitForDelivery(of identifier: Int) async {
        await withCheckedContinuation { continuation in
            let live = guarded.withLock { guarded -> Bool in
                guard guarded.registry.tasks[identifier] != nil else { return false }
                guarded.deliveryWaiters[identifier, default: []].append(continuation)
                return true
            }
            if !live { continuation.resume() }
        }
    }

    /// Registers a task under the identifier its core task has (a
    /// background task an earlier program made keeps it).
    func register<T: URLSessionTask>(keepingIdentifierOf core: SessionTask, as make: (SessionTask, Int, URLSession) -> T) -> T {
        let identifier = core.taskIdentifier
        guarded.withLock { $0.registry.reserve(identifier) }
        return register { _ in make(core, identifier, self) }
    }

    /// `taskDidComplete` from a delegate-queue operation, which must not
    /// wait: an invalidation this completes is reported by a new task (its
    /// call still comes after the handler that just returned).
    func taskDidCompleteWithoutWaiting(_ task: URLSessionTask) {
        let action = forget(task)
        guard action == .reportInvalidation else { return }
        Task { await perform(action) }
    }

    private func perform(_ action: TaskRegistry<URLSessionTask>.Action) async {
        guard action == .reportInvalidation else { return }
        let delegate = guarded.withLock { $0.delegate }
        await makeDelegateLane().run { [self] in
            delegate?.urlSession(self, didBecomeInvalidWithError: nil)
        }
        // After the call, as Apple: the session lets go of its delegate.
        guarded.withLock { $0.delegate = nil }
    }

    // MARK: - Task factories (delegate)

    /// A data task; its calls go to the delegate. Starts suspended.
    open func dataTask(with request: URLRequest) -> URLSessionDataTask {
        register(asyncSession.dataTask(with: request), as: URLSessionDataTask.init(core:identifier:session:completion:))
    }

    open func dataTask(with url: URL) -> URLSessionDataTask {
        dataTask(with: URLRequest(url: url))
    }

    open func uploadTask(with request: URLRequest, from bodyData: Data) -> URLSessionUploadTask {
        register(asyncSession.uploadTask(with: request, from: bodyData), as: URLSessionUploadTask.init(core:identifier:session:completion:))
    }

    /// The file is read as it is sent, never loaded whole.
    open func uploadTask(with request: URLRequest, fromFile fileURL: URL) -> URLSessionUploadTask {
        register(asyncSession.uploadTask(with: request, fromFile: fileURL), as: URLSessionUploadTask.init(core:identifier:session:completion:))
    }

    /// The body comes from the delegate's `needNewBodyStream`, or, when it is
    /// not implemented, from the request's `httpBodyStream` (once).
    open func uploadTask(withStreamedRequest request: URLRequest) -> URLSessionUploadTask {
        let task = register(asyncSession.uploadTask(withStreamedRequest: request), as: URLSessionUploadTask.init(core:identifier:session:completion:))
        task.setInitialBodyStream(request.httpBodyStream)
        return task
    }

    open func downloadTask(with request: URLRequest) -> URLSessionDownloadTask {
        register(asyncSession.downloadTask(with: request), as: URLSessionDownloadTask.init(core:identifier:session:completion:))
    }

    open func downloadTask(with url: URL) -> URLSessionDownloadTask {
        downloadTask(with: URLRequest(url: url))
    }

    /// Bad resume data gives a task that fails with a clear error when resumed.
    open func downloadTask(withResumeData resumeData: Data) -> URLSessionDownloadTask {
        register(asyncSession.downloadTask(withResumeData: resumeData), as: URLSessionDownloadTask.init(core:identifier:session:completion:))
    }

    // MARK: - Task factories (completion handler)

    /// Apple raises an exception for a completion handler in a background
    /// session; here the task fails instead, through its handler, saying so.
    private func refusingHandlerIfBackground(_ request: URLRequest, download: Bool = false) -> SessionTask? {
        guard asyncSession.configuration.backgroundIdentifier != nil else { return nil }
        return asyncSession.refusedTask(
            for: request, download: download,
            error: URLError(.unknown, userInfo: [
                NSLocalizedDescriptionKey: "Completion handlers are not supported in background sessions (Apple "
                    + "raises an exception): make the task without a handler and use the session's delegate.",
                NSURLErrorFailingURLErrorKey: request.url as Any,
            ]))
    }

    /// The body is collected in memory (up to the configuration's
    /// `maximumCollectedBodySize`) and handed to `completionHandler` on the
    /// delegate queue; the delegate still hears redirects and challenges.
    open func dataTask(
        with request: URLRequest,
        completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask {
        register(
            refusingHandlerIfBackground(request) ?? asyncSession.dataTask(with: request),
            as: URLSessionDataTask.init(core:identifier:session:completion:), completion: .data(completionHandler))
    }

    open func dataTask(
        with url: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask {
        dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
    }

    open func uploadTask(
        with request: URLRequest, from bodyData: Data?,
        completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionUploadTask {
        register(
            refusingHandlerIfBackground(request) ?? asyncSession.uploadTask(with: request, from: bodyData ?? Data()),
            as: URLSessionUploadTask.init(core:identifier:session:completion:), completion: .data(completionHandler))
    }

    open func uploadTask(
        with request: URLRequest, fromFile fileURL: URL,
        completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionUploadTask {
        register(
            refusingHandlerIfBackground(request) ?? asyncSession.uploadTask(with: request, fromFile: fileURL),
            as: URLSessionUploadTask.init(core:identifier:session:completion:), completion: .data(completionHandler))
    }

    /// The file exists while `completionHandler` runs and is deleted after it
    /// returns: move it before returning.
    open func downloadTask(
        with request: URLRequest, completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDownloadTask {
        register(
            refusingHandlerIfBackground(request, download: true) ?? asyncSession.downloadTask(with: request),
            as: URLSessionDownloadTask.init(core:identifier:session:completion:), completion: .download(completionHandler))
    }

    open func downloadTask(
        with url: URL, completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDownloadTask {
        downloadTask(with: URLRequest(url: url), completionHandler: completionHandler)
    }

    open func downloadTask(
        withResumeData resumeData: Data,
        completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDownloadTask {
        register(
            refusingHandlerIfBackground(URLRequest(url: URL(fileURLWithPath: "/")), download: true)
                ?? asyncSession.downloadTask(withResumeData: resumeData),
            as: URLSessionDownloadTask.init(core:identifier:session:completion:), completion: .download(completionHandler))
    }

    /// For the async calls: a data task whose result goes to `completion`.
    func makeTask(_ core: SessionTask, completion: TaskDriver.Completion) -> URLSessionDataTask {
        register(core, as: URLSessionDataTask.init(core:identifier:session:completion:), completion: completion)
    }

    /// For the async calls: a download task whose result goes to `completion`.
    func makeDownloadTask(_ core: SessionTask, completion: TaskDriver.Completion) -> URLSessionDownloadTask {
        register(core, as: URLSessionDownloadTask.init(core:identifier:session:completion:), completion: completion)
    }

    // MARK: - Invalidation

    /// Running tasks finish; new ones are refused. After the last completes,
    /// the delegate gets `didBecomeInvalidWithError(nil)` and is released.
    /// Does nothing on `shared`.
    open func finishTasksAndInvalidate() {
        guard !isShared else { return }
        asyncSession.finishTasksAndInvalidate()
        let action = guarded.withLock { $0.registry.invalidate() }
        Task { await perform(action) }
    }

    /// Cancels every task, then invalidates as `finishTasksAndInvalidate`.
    open func invalidateAndCancel() {
        guard !isShared else { return }
        let (action, tasks) = guarded.withLock { guarded in
            (guarded.registry.invalidate(), Array(guarded.registry.tasks.values))
        }
        for task in tasks { task.cancel() }
        asyncSession.invalidateAndCancel()
        Task { await perform(action) }
    }

    /// Empties the session's credential store, cookie storage and cache,
    /// then calls `completionHandler` on the delegate queue.
    open func reset(completionHandler: @escaping @Sendable () -> Void) {
        Task {
            await asyncSession.reset()
            delegateQueue.addOperation(completionHandler)
        }
    }

    /// Writes the cookie and credential storages' files and the cache's
    /// database now, then calls `completionHandler` on the delegate queue.
    open func flush(completionHandler: @escaping @Sendable () -> Void) {
        Task {
            await asyncSession.flush()
            delegateQueue.addOperation(completionHandler)
        }
    }

    /// The tasks not yet completed, by kind.
    open func getTasksWithCompletionHandler(
        _ completionHandler: @escaping @Sendable ([URLSessionDataTask], [URLSessionUploadTask], [URLSessionDownloadTask])
            -> Void
    ) {
        let tasks = liveTasks
        let uploads = tasks.compactMap { $0 as? URLSessionUploadTask }
        let data = tasks.compactMap { $0 as? URLSessionDataTask }.filter { !($0 is URLSessionUploadTask) }
        let downloads = tasks.compactMap { $0 as? URLSessionDownloadTask }
        delegateQueue.addOperation { completionHandler(data, uploads, downloads) }
    }

    open func getAllTasks(completionHandler: @escaping @Sendable ([URLSessionTask]) -> Void) {
        let tasks = liveTasks
        delegateQueue.addOperation { completionHandler(tasks) }
    }

    /// Live tasks, oldest first. A cancelled task is no longer listed,
    /// even while its completion is on its way (as FoundationNetworking:
    /// right after `invalidateAndCancel()` the list is empty).
    private var liveTasks: [URLSessionTask] {
        let registered = guarded.withLock { guarded in
            guarded.registry.tasks.sorted { $0.key < $1.key }.map(\.value)
        }
        return registered.filter { $0.state == .running || $0.state == .suspended }
    }
}
