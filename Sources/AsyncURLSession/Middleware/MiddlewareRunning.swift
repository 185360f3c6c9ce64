import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The task's middleware (`RequestMiddleware`) around its hops: each
/// attempt's request goes through the chain's `prepare` before it starts,
/// and the response the task is about to deliver through its `inspect`,
/// while the body waits behind the pipeline's gate. A task without
/// middleware never comes here (`TaskCore.usesMiddleware` is false: one
/// relaxed load per hop).
enum MiddlewareRunning {
    /// Starts a hop with `request`, after the middleware prepared it.
    static func prepare(_ request: URLRequest, credential: HopCredential?, on task: some PolicyHost) {
        let (taskLayers, attempt) = task.machine { $0.middlewareAttemptStarts() }
        let chain = chain(taskLayers: taskLayers, on: task)
        let context = MiddlewareAttempt(
            number: attempt, taskIdentifier: task.identifier, originalRequest: task.originalRequest)
        run(on: task) {
            do {
                switch try await chain.prepare(request, attempt: context) {
                case .send(let prepared):
                    task.sendPrepared(prepared, credential: credential)
                case .respond(let response, let body):
                    task.log?.hop(
                        request.httpMethod ?? "GET", url: request.url?.absoluteString ?? "-", via: "middleware",
                        headers: [])
                    task.answerLocally(
                        request, responder: CannedResponder(response: response, body: body), credential: credential)
                }
            } catch {
                if !task.hasEnded {
                    task.completeWithTransactions(error: MiddlewareChain.failure(error, url: task.failingURLString))
                }
            }
        }
    }

    /// The response about to be delivered goes through the chain's
    /// `inspect` first; its body waits behind the closed gate (and the
    /// hop's end, if it comes, waits for the publication). Returns false
    /// when there is nothing to inspect (deliver as usual).
    static func inspect(_ source: ResponseSource, heldBody: Data?, on task: some PolicyHost) -> Bool {
        guard let response = source.response else { return false }
        let (taskLayers, attempt, request, hop) = task.machine { $0.inspectionStarts() }
        let chain = chain(taskLayers: taskLayers, on: task)
        let context = MiddlewareAttempt(
            number: attempt, taskIdentifier: task.identifier, originalRequest: task.originalRequest)
        run(on: task) {
            let step: MiddlewareResponseStep
            do {
                step = try await chain.inspect(response, request: request, attempt: context)
            } catch {
                endInspection(failing: MiddlewareChain.failure(error, url: task.failingURLString), on: task)
                return
            }
            if let cancellation = task.machine({ $0.cancellationUnderWay }) {
                endInspection(failing: cancellation, on: task)
                return
            }
            switch step {
            case .accept:
                task.deliverInspected(source, heldBody: heldBody)
            case .retry(let next):
                abandonHop(hop, for: next, on: task)
            }
        }
        return true
    }

    /// The session's layers, then the task's (built outside the lock; no
    /// new array when the task has none of its own).
    private static func chain(taskLayers: [any RequestMiddleware], on task: some PolicyHost) -> MiddlewareChain {
        let session = task.context.configuration.middleware
        return MiddlewareChain(layers: taskLayers.isEmpty ? session : session + taskLayers)
    }

    /// Runs `body` in a Swift task that `cancel()` cancels. Off the
    /// transport's threads it starts on the calling thread (`Task.immediate`):
    /// a middleware that does not suspend then costs no hand-off to the
    /// cooperative pool (a task's first request is prepared on the thread
    /// that resumed it). On a transport thread, where user code must never
    /// run, it starts on the pool.
    private static func run(on task: some PolicyHost, _ body: @escaping @Sendable () async -> Void) {
        let running = TaskCore.ConsumerWakes.isTransportThread ? Task { await body() } : Task.immediate { await body() }
        let cancelled = task.machine { $0.middlewareRuns(running) }
        if cancelled { running.cancel() }
    }

    /// Inspection ended the task: the hop is stopped with `error` (or, if
    /// it ended meanwhile, the task ends here).
    private static func endInspection(failing error: URLError, on task: some PolicyHost) {
        let (pending, exchange) = task.machine { $0.inspectionEnds() }
        if let exchange {
            exchange.cancel(error: error)
        } else if pending != nil || !task.hasEnded {
            task.completeWithTransactions(error: error)
        }
    }

    /// A middleware asked for another attempt: the current hop is left
    /// (its body unread, its end ignored) and `request` goes instead.
    private static func abandonHop(_ hop: HopID?, for request: URLRequest, on task: some PolicyHost) {
        let (allowed, left) = task.machine { $0.abandonHop(hop) }
        left?.cancel(error: URLError.make(.cancelled, url: task.failingURLString, reason: "cancelled"))
        guard allowed else {
            task.completeWithTransactions(error: URLError.make(
                .cannotLoadFromNetwork, url: task.failingURLString,
                reason: "A request middleware asked for another attempt more than "
                    + "\(MiddlewareState.maximumRetries) times; the last response was dropped."))
            return
        }
        task.log?.decision("middleware", "another attempt: \(TaskLog.redacted(request.url))")
        task.startHop(request, credential: nil)
    }
}
