internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The task's middleware (`RequestMiddleware`): each attempt's request goes
/// through the chain's `prepare` before it starts, and the response the
/// task is about to deliver through its `inspect`, while the body waits
/// behind the pipeline's gate. A task without middleware never comes here
/// (`usesMiddleware` is false): one relaxed load per hop.
extension TaskCore {
    /// Starts a hop with `request`, after the middleware prepared it.
    func startHop(_ request: URLRequest, credential: HopCredential?) {
        guard usesMiddleware.load(ordering: .relaxed) else {
            startPreparedHop(request, credential: credential)
            return
        }
        let (taskLayers, attempt) = guarded.withLock { $0.middlewareAttemptStarts() }
        let chain = middlewareChain(taskLayers: taskLayers)
        let context = MiddlewareAttempt(number: attempt, taskIdentifier: identifier, originalRequest: originalRequest)
        whileMiddlewareRuns { [self] in
            do {
                switch try await chain.prepare(request, attempt: context) {
                case .send(let prepared):
                    startPreparedHop(prepared, credential: credential)
                case .respond(let response, let body):
                    log?.hop(request.httpMethod ?? "GET", url: request.url?.absoluteString ?? "-", via: "middleware", headers: [])
                    launchLocalHop(
                        request, responder: CannedResponder(response: response, body: body), cache: nil,
                        credential: credential)
                }
            } catch {
                if !hasEnded { completeWithTransactions(error: MiddlewareChain.failure(error, url: failingURLString)) }
            }
        }
    }

    /// The response about to be delivered goes through the chain's
    /// `inspect` first; its body waits behind the closed gate (and the
    /// hop's end, if it comes, waits for the publication).
    /// Returns false when the task has no middleware (deliver as usual).
    func inspectBeforeDelivering(_ source: ResponseSource, heldBody: Data?) -> Bool {
        guard usesMiddleware.load(ordering: .relaxed) else { return false }
        guard let response = source.response else { return false }
        let (taskLayers, attempt, request, hop) = guarded.withLock { $0.inspectionStarts() }
        let chain = middlewareChain(taskLayers: taskLayers)
        let context = MiddlewareAttempt(number: attempt, taskIdentifier: identifier, originalRequest: originalRequest)
        whileMiddlewareRuns { [self] in
            let step: MiddlewareResponseStep
            do {
                step = try await chain.inspect(response, request: request, attempt: context)
            } catch {
                endInspection(failing: MiddlewareChain.failure(error, url: failingURLString))
                return
            }
            if let cancellation = guarded.withLock({ $0.cancellationUnderWay }) {
                endInspection(failing: cancellation)
                return
            }
            switch step {
            case .accept:
                deliverAfterMiddleware(source, heldBody: heldBody)
            case .retry(let next):
                abandonHop(hop, for: next)
            }
        }
        return true
    }

    /// The session's layers, then the task's (built outside the lock; no
    /// new array when the task has none of its own).
    private func middlewareChain(taskLayers: [any RequestMiddleware]) -> MiddlewareChain {
        let session = context.configuration.middleware
        return MiddlewareChain(layers: taskLayers.isEmpty ? session : session + taskLayers)
    }

    /// Runs `body` in a Swift task that `cancel()` cancels. Off the engine
    /// threads it starts on the calling thread (`Task.immediate`): a
    /// middleware that does not suspend then costs no hand-off to the
    /// cooperative pool (a task's first request is prepared on the thread
    /// that resumed it). On an engine thread, where user code must never
    /// run, it starts on the pool.
    private func whileMiddlewareRuns(_ body: @escaping @Sendable () async -> Void) {
        let running = EngineTurn.isEngineThread ? Task { await body() } : Task.immediate { await body() }
        let cancelled = guarded.withLock { $0.middlewareRuns(running) }
        if cancelled { running.cancel() }
    }

    /// Inspection ended the task: the hop is stopped with `error` (or, if
    /// it ended meanwhile, the task ends here).
    private func endInspection(failing error: URLError) {
        let (pending, exchange) = guarded.withLock { $0.inspectionEnds() }
        if let exchange {
            exchange.cancel(error: error)
        } else if pending != nil || !hasEnded {
            completeWithTransactions(error: error)
        }
    }

    /// Every middleware accepted: the response goes on as it would have
    /// without them (handlers, then the consumer), and the gate opens.
    private func deliverAfterMiddleware(_ source: ResponseSource, heldBody: Data?) {
        guard hasHandlers else {
            publishResponse(source, decision: nil, heldBody: heldBody, afterHandlers: true)
            return
        }
        let decision = ResponseDecision(listener: .task(self))
        askHandlers(decision) { handler, task in
            guard let response = source.response else { return }
            await handler.task(task, didReceive: response, decision: decision)
        } then: { [self] in
            publishResponse(source, decision: decision, heldBody: heldBody, afterHandlers: true)
        }
    }

    /// A middleware asked for another attempt: the current hop is left
    /// (its body unread, its end ignored) and `request` goes instead.
    private func abandonHop(_ hop: HopID?, for request: URLRequest) {
        let (allowed, left) = guarded.withLock { $0.abandonHop(hop) }
        left?.cancel(error: URLError.make(.cancelled, url: failingURLString, reason: "cancelled"))
        guard allowed else {
            completeWithTransactions(error: URLError.make(
                .cannotLoadFromNetwork, url: failingURLString,
                reason: "A request middleware asked for another attempt more than "
                    + "\(MiddlewareState.maximumRetries) times; the last response was dropped."))
            return
        }
        log?.decision("middleware", "another attempt: \(TaskLog.redacted(request.url))")
        startHop(request, credential: nil)
    }
}
