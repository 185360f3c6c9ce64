import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Pulls one core task's events and turns each into the classic call, on the
/// delegate queue, waiting for each before pulling the next: this is what
/// keeps SPEC §3's order and never lets two calls for one task overlap.
/// Decisions are answered before the next pull, so the core never applies a
/// default over a delegate that is still thinking.
struct TaskDriver: Sendable {
    /// Where a task's result goes.
    enum Completion: Sendable {
        /// Delegate calls for everything (`didReceiveData`, `didComplete...`).
        case delegate
        /// The body collected in memory, then this handler; no data-delivery
        /// or completion delegate calls (redirects and challenges still go
        /// to the delegate).
        case data(@Sendable (Data?, URLResponse?, (any Error)?) -> Void)
        /// The file, then this handler; the file is deleted after it returns.
        case download(@Sendable (URL?, URLResponse?, (any Error)?) -> Void)
        /// `bytes(for:)`: hands the task over at its response.
        case bytes(AnswerSlot<Result<(AsyncBytes, URLResponse), any Error>>)
        /// `data(for:)` with no delegate anywhere: the task collects its
        /// body in the core and the caller awaits it there; no driver runs
        /// (see `URLSession.startDriver`).
        case awaitedByCaller
    }

    let session: URLSession
    let task: URLSessionTask
    let completion: Completion

    /// This task's lane on the delegate queue: its calls run in order.
    let queue: DelegateQueue

    var delegateMode: Bool {
        if case .delegate = completion { return true }
        return false
    }

    /// What the driver keeps between events.
    private struct Progress {
        /// The task calls are about: the data task, or the download task it became.
        var current: URLSessionTask
        var body = Data()
        /// The configuration's `maximumCollectedBodySize`, read once (not per chunk).
        var bodyLimit: Int
        var keptFile: URL?
        var sawMetrics = false
        /// A delegate task with `prefersIncrementalDelivery` off: its body
        /// waits here and goes to the delegate in one call at the end.
        var heldBody: Data?
        /// The task was made by an async call with a delegate of its own:
        /// that delegate hears the body and download progress (see
        /// `URLSessionTask.reportsProgressToTaskDelegate`).
        var reportsToTaskDelegate: Bool
        /// Bound input streams the delegate handed over for the body: closed
        /// when the task ends, as URLSession closes the streams it reads.
        var boundBodyStreams: [StreamBox] = []
    }

    func run() async {
        var progress = Progress(
            current: task, bodyLimit: session.settings.maximumCollectedBodySize,
            heldBody: delegateMode && !task.prefersIncrementalDelivery ? Data() : nil,
            reportsToTaskDelegate: task.reportsProgressToTaskDelegate)
        var failure: (any Error)?
        do {
            var handled = 0
            while let event = try await task.core.nextEvent() {
                if try await handle(event, &progress) == .handedOver { return }
                // Events that are ready are handled in one job of the
                // lane; now and then give the delegate queue to others.
                handled += 1
                if handled % DelegateQueue.callsPerOperation == 0 { await Task.yield() }
            }
        } catch {
            failure = error
        }
        // A body read that still waits (the task failed or was cancelled
        // while the writer had not closed) returns, and the writer hears
        // its end (`.endEncountered`) instead of waiting forever.
        for box in progress.boundBodyStreams { box.stream.close() }
        if !progress.sawMetrics {
            await deliverHeldBody(&progress)
            if let metrics = task.core.metrics { await deliverMetrics(metrics, on: progress.current) }
        }
        await finish(progress, error: failure)
        await session.taskDidComplete(progress.current)
    }

    private enum Step { case next, handedOver }

    private func handle(_ event: TaskEvent, _ progress: inout Progress) async throws -> Step {
        let current = progress.current
        switch event {
        case .redirect(let decision):
            await redirect(decision, on: current)
        case .challenge(let decision):
            await challenge(decision, on: current)
        case .needBodyStream(let decision):
            if let provided = await bodyStream(decision, on: current), provided.stream is BoundInputStream {
                progress.boundBodyStreams.append(provided)
            }
        case .resumed(let offset, let expected):
            guard delegateMode, let download = current as? URLSessionDownloadTask else { break }
            await notify(URLSessionDownloadDelegate.self, on: current) { delegate in
                delegate.urlSession(session, downloadTask: download, didResumeAtOffset: offset, expectedTotalBytes: expected)
            }
        case .response(let response, let decision):
            if case .bytes(let slot) = completion {
                task.markCompletionDelivered()
                slot.fill(.success((AsyncBytes(task: task.core), response)))
                await session.taskDidComplete(task)
                return .handedOver
            }
            if let next = await respond(response, decision, on: current) { progress.current = next }
        case .waitingForConnectivity:
            await notify(URLSessionTaskDelegate.self, on: current) { delegate in
                delegate.urlSession(session, taskIsWaitingForConnectivity: current)
            }
        case .retrying:
            // Apple's delegate has no call for it; the attempts show in
            // the task's metrics (one transaction each).
            break
        case .informationalResponse(let response):
            await notify(URLSessionTaskDelegate.self, on: current) { delegate in
                delegate.urlSession(session, task: current, didReceiveInformationalResponse: response)
            }
        case .uploadProgress(let step):
            await notify(URLSessionTaskDelegate.self, on: current) { delegate in
                delegate.urlSession(
                    session, task: current, didSendBodyData: step.bytes, totalBytesSent: step.totalBytes,
                    totalBytesExpectedToSend: step.totalBytesExpected)
            }
        case .data(let chunk):
            try await receive(chunk, &progress)
        case .downloadProgress(let step):
            guard delegateMode || progress.reportsToTaskDelegate, let download = current as? URLSessionDownloadTask
            else { break }
            await notify(URLSessionDownloadDelegate.self, on: current, onlyTaskDelegate: !delegateMode) { delegate in
                delegate.urlSession(
                    session, downloadTask: download, didWriteData: step.bytes, totalBytesWritten: step.totalBytes,
                    totalBytesExpectedToWrite: step.totalBytesExpected)
            }
        case .downloaded(let location):
            try await downloaded(location, &progress)
        case .trailers:
            // Apple's classic API has no call for them.
            break
        case .willCacheResponse(let decision):
            // As Apple: the body (held or not) reaches the delegate first.
            await deliverHeldBody(&progress)
            await willCache(decision, on: current)
        case .metrics(let metrics):
            progress.sawMetrics = true
            await deliverHeldBody(&progress)
            await deliverMetrics(metrics, on: current)
        }
        return .next
    }

    // MARK: - Body

    private func receive(_ chunk: Data, _ progress: inout Progress) async throws {
        switch completion {
        case .delegate:
            guard let dataTask = progress.current as? URLSessionDataTask else { return }
            if progress.heldBody != nil {
                progress.heldBody?.append(chunk)
                return
            }
            await notify(URLSessionDataDelegate.self, on: dataTask, postingBytes: chunk.count) { delegate in
                delegate.urlSession(session, dataTask: dataTask, didReceive: chunk)
            }
        case .data:
            if progress.reportsToTaskDelegate, let dataTask = progress.current as? URLSessionDataTask {
                await notify(URLSessionDataDelegate.self, on: dataTask, postingBytes: chunk.count, onlyTaskDelegate: true) {
                    delegate in
                    delegate.urlSession(session, dataTask: dataTask, didReceive: chunk)
                }
            }
            let limit = progress.bodyLimit
            guard progress.body.count + chunk.count <= limit else {
                task.core.cancel()
                throw URLError.adapter(
                    .dataLengthExceedsMaximum,
                    "The body is larger than maximumCollectedBodySize (\(limit) bytes): "
                        + "use a download task or a delegate to receive it in pieces.",
                    url: task.currentRequest?.url)
            }
            if progress.body.isEmpty {
                // One allocation for a body of announced length, not one per doubling.
                let expected = task.core.countOfBytesExpectedToReceive
                if expected > 0, expected <= Int64(limit) { progress.body.reserveCapacity(Int(expected)) }
            }
            progress.body.append(chunk)
        case .download, .bytes, .awaitedByCaller:
            break
        }
    }

    private func downloaded(_ location: URL, _ progress: inout Progress) async throws {
        switch completion {
        case .delegate:
            guard let download = progress.current as? URLSessionDownloadTask else { return }
            // The file exists during the call; the core deletes it when the
            // next event is pulled, after the call returned.
            await notify(URLSessionDownloadDelegate.self, on: download) { delegate in
                delegate.urlSession(session, downloadTask: download, didFinishDownloadingTo: location)
            }
        case .download:
            // Keep the file past the next pull: the handler comes at the end.
            let kept = location.deletingLastPathComponent()
                .appendingPathComponent("handler-\(UUID().uuidString).tmp")
            try FileManager.default.moveItem(at: location, to: kept)
            progress.keptFile = kept
        case .data, .bytes, .awaitedByCaller:
            break
        }
    }

    // MARK: - End

    /// The whole body, in one call, for a task that does not prefer
    /// incremental delivery (before its metrics and completion).
    private func deliverHeldBody(_ progress: inout Progress) async {
        guard let body = progress.heldBody, !body.isEmpty, let dataTask = progress.current as? URLSessionDataTask else {
            return
        }
        progress.heldBody = Data()
        await notify(URLSessionDataDelegate.self, on: dataTask) { delegate in
            delegate.urlSession(session, dataTask: dataTask, didReceive: body)
        }
    }

    private func deliverMetrics(_ metrics: TaskMetrics, on current: URLSessionTask) async {
        // Built in the call: with no delegate (completion handlers) nobody pays for it.
        await notify(URLSessionTaskDelegate.self, on: current) { delegate in
            delegate.urlSession(session, task: current, didFinishCollecting: URLSessionTaskMetrics(metrics))
        }
    }

    private func finish(_ progress: Progress, error: (any Error)?) async {
        let current = progress.current
        let response = task.core.response
        // `state` reads .canceling (or .running) until the completion is
        // delivered: marked on the delegate queue, right before the call.
        let task = task
        let delivered: @Sendable () -> Void = {
            task.markCompletionDelivered()
            if current !== task { current.markCompletionDelivered() }
        }
        defer { delivered() }  // also when no delegate implements the call
        switch completion {
        case .delegate:
            await notify(URLSessionTaskDelegate.self, on: current) { delegate in
                delivered()
                delegate.urlSession(session, task: current, didCompleteWithError: error)
            }
        case .data(let handler):
            let body = error == nil ? progress.body : nil
            await queue.run {
                delivered()
                handler(body, response, error)
            }
        case .download(let handler):
            let file = error == nil ? progress.keptFile : nil
            await queue.run {
                delivered()
                handler(file, response, error)
            }
            if let kept = progress.keptFile { try? FileManager.default.removeItem(at: kept) }
        case .bytes(let slot):
            slot.fill(.failure(error ?? URLError.adapter(
                .badServerResponse, "The transfer ended without a response.", url: task.currentRequest?.url)))
        case .awaitedByCaller:
            break  // no driver runs for it (`URLSession.startDriver`)
        }
    }

    // MARK: - Delegate calls

    /// The delegates to ask for a task-level call: the task's own, then the session's.
    func candidates(for task: URLSessionTask) -> [any URLSessionDelegate] {
        [task.delegate, session.delegate].compactMap { $0 }
    }

    /// A call that answers nothing: the first candidate that implements it.
    /// With `postingBytes`, the call may run after this returns (body bytes:
    /// see `DelegateQueue.post`); it still runs before any later call.
    func notify<Delegate>(
        _ type: Delegate.Type, on task: URLSessionTask, postingBytes: Int? = nil, onlyTaskDelegate: Bool = false,
        _ call: @escaping @Sendable (Delegate) -> Void
    ) async {
        let candidates = onlyTaskDelegate ? [task.delegate].compactMap { $0 } : candidates(for: task)
        guard !candidates.isEmpty else { return }
        let body: @Sendable () -> Void = {
            for candidate in candidates {
                guard let delegate = candidate as? Delegate else { continue }
                if !DefaultImplementationMarker.ranDefault({ call(delegate) }) { return }
            }
        }
        if let postingBytes { await queue.post(bytes: postingBytes, body) } else { await queue.run(body) }
    }

    /// What a question to the delegates came to.
    enum Reply<Answer: Sendable>: Sendable {
        case answered(Answer)
        /// No candidate implements the method: the core's default applies.
        case notImplemented
        /// The task was cancelled while the delegate had not answered.
        case abandoned
    }

    /// A call with a completion handler, or its async form: the first
    /// candidate that implements either answers (whenever it calls the
    /// handler).
    func ask<Delegate, Answer: Sendable>(
        _ type: Delegate.Type, of candidates: [any URLSessionDelegate], on task: URLSessionTask,
        asyncForm method: AsyncDelegateForms.Method,
        _ call: @escaping @Sendable (Delegate, _ answer: @escaping @Sendable (Answer) -> Void) -> Void,
        orAsync asyncCall: @escaping @Sendable (Delegate) async -> Answer
    ) async -> Reply<Answer> {
        // Each candidate in turn, in either form: the task's delegate before
        // the session's, whichever form each has. With one candidate (no
        // task delegate, the common case) this is the one question it was
        // before there were async forms; the async form's bookkeeping (a
        // lock) is paid only by a delegate without the completion form.
        for candidate in candidates {
            let reply = await ask(type, of: [candidate], on: task, call)
            guard case .notImplemented = reply else { return reply }
            guard candidate is Delegate, AsyncDelegateForms.mayImplement(candidate, method) else { continue }
            let asyncReply = await askAsync(candidate, on: task, method, asyncCall)
            guard case .notImplemented = asyncReply else { return asyncReply }
        }
        return .notImplemented
    }

    /// The async form of a call, in a task of its own started from the
    /// delegate queue (as Apple runs async delegate methods); abandoned, as
    /// a completion handler is, when the task is cancelled meanwhile.
    private func askAsync<Delegate, Answer: Sendable>(
        _ candidate: any URLSessionDelegate, on task: URLSessionTask, _ method: AsyncDelegateForms.Method,
        _ call: @escaping @Sendable (Delegate) async -> Answer
    ) async -> Reply<Answer> {
        let reply = await queue.ask(registeringWith: { slot in task.setPendingAnswer { slot.abandon() } }) {
            (answer: @escaping @Sendable (Reply<Answer>) -> Void) in
            Task {
                guard let delegate = candidate as? Delegate else { return answer(.notImplemented) }
                let own = await AsyncDelegateForms.call(candidate, method) { await call(delegate) }
                answer(own.map { .answered($0) } ?? .notImplemented)
            }
        }
        task.setPendingAnswer(nil)
        return reply ?? .abandoned
    }

    /// A call with a completion handler: the first candidate that implements
    /// it answers (whenever it calls the handler).
    func ask<Delegate, Answer: Sendable>(
        _ type: Delegate.Type, of candidates: [any URLSessionDelegate], on task: URLSessionTask,
        _ call: @escaping @Sendable (Delegate, _ answer: @escaping @Sendable (Answer) -> Void) -> Void
    ) async -> Reply<Answer> {
        guard !candidates.isEmpty else { return .notImplemented }
        let reply = await queue.ask(registeringWith: { slot in task.setPendingAnswer { slot.abandon() } }) {
            (answer: @escaping @Sendable (Reply<Answer>) -> Void) in
            for candidate in candidates {
                guard let delegate = candidate as? Delegate else { continue }
                // A default implementation answers at once, and its answer
                // must not count: hold answers until the call is known to be
                // the delegate's own.
                let gate = AnswerGate<Answer> { answer(.answered($0)) }
                if !DefaultImplementationMarker.ranDefault({ call(delegate, gate.pass) }) {
                    gate.open()
                    return
                }
            }
            answer(.notImplemented)
        }
        task.setPendingAnswer(nil)
        return reply ?? .abandoned
    }
}
