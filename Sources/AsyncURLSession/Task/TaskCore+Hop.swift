internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The engine side of a task's hops: response heads, body bytes, and what
/// happens when a hop's transfer ends (the task ends, or a redirect or
/// challenge decision is offered).
extension TaskCore {
    var hasHandlers: Bool { delegate != nil || context.delegate != nil }

    // MARK: - Engine callbacks (engine thread)

    func hopDidReceiveHead(_ head: consuming ResponseHead, id: HopID) {
        har?.receivedHead(status: head.statusCode, hop: id)
        // Nothing to do between the verdict and the publication (no cookie
        // or HSTS policy to store, nobody logging, tracing or asked first):
        // a collected body's response is then published under the same lock.
        let publishesAtOnce = !head.hasSetCookie && !head.hasStrictTransportSecurity && log == nil
            && observation == nil && !hasHandlers && !usesMiddleware.load(ordering: .relaxed)
        guard let (check, publishedAtOnce) = guarded.withLock({
            $0.checkHead(head, id: id, publishesAtOnce: publishesAtOnce)
        }) else { return }
        if let publishedAtOnce {
            carryOut(publishedAtOnce, decision: nil)
            return
        }
        let url = check.url
        learn(from: head, url: url, fromCache: check.fromCache)
        var verdict = check.verdict
        if verdict == nil {
            // Foundation's HTTPURLResponse is costly to build: never under
            // the lock, and only where it is needed (see ResponseSource).
            let source = ResponseSource(head: head, url: url)
            let redirectsAsFoundation = context.configuration.redirectsAsFoundationNetworking
            verdict = guarded.withLock {
                $0.receivedHead(source, id: id, redirectsAsFoundationNetworking: redirectsAsFoundation) {
                    context.configuration.isSensitiveHeader($0)
                }
            }
        }
        if case .deliver(let source) = verdict, !startMultipart(source, id: id) {
            deliverFinalResponse(source, heldBody: nil, consumer: check.consumer)
        }
    }

    /// A head the hop's `CacheStage` absorbed (a 304 that revalidated the
    /// stored response, which answers instead): nothing for the consumer,
    /// but what every head from the network teaches the session.
    func hopAbsorbedHead(_ head: consuming ResponseHead, id: HopID) {
        har?.absorbedHead(head, hop: id)
        guard let url = guarded.withLock({ $0.currentURL(of: id) }) else { return }
        learn(from: head, url: url, fromCache: false)
    }

    /// What any head teaches the session (its cookies, its HSTS policy),
    /// and its log and trace.
    private func learn(from head: borrowing ResponseHead, url: URL, fromCache: Bool) {
        // A stored response's cookies were stored when it first came; a
        // local transport's (a stub's) are new, as a server's.
        if head.hasSetCookie, !fromCache { storeCookies(head.fields.values(named: "Set-Cookie"), from: url) }
        // HSTS is learned from https responses only (the store checks the
        // scheme), from the first field only (RFC 6797 §8.1). The parser's
        // flag keeps the fields unread for every other response.
        if head.hasStrictTransportSecurity, !fromCache, let store = context.configuration.hstsStore,
            let policy = head.fields.values(named: "Strict-Transport-Security").first
        {
            store.note(policy, from: url)
        }
        log?.response(status: head.statusCode, headers: head.fields)
        observation?.response(status: head.statusCode, httpVersion: head.httpVersion)
    }

    /// Hop `id`'s exchange ended at `url` (a local responder followed
    /// redirects itself: the background agent): its request names it, so
    /// the response built from the next head, and `currentRequest`, do.
    func hopMoved(to url: URL, id: HopID) {
        guarded.withLock { $0.hopMoved(to: url, id: id) }
    }

    /// Every hop's Set-Cookie fields go to the jar (a redirect's too, before
    /// it is followed), unless the session or the request opts out.
    private func storeCookies(_ fields: [String], from url: URL) {
        let configuration = context.configuration
        guard configuration.httpShouldSetCookies, originalRequest.httpShouldHandleCookies,
            let jar = configuration.cookieJar
        else { return }
        jar.storeCookies(
            fromSetCookieFields: fields, for: url, mainDocumentURL: originalRequest.mainDocumentURL,
            acceptPolicy: configuration.httpCookieAcceptPolicy)
    }

    func hopDidReceiveBody(_ bytes: UnsafeRawBufferPointer, id: HopID) -> BodyVerdict {
        let outcome = guarded.withLock { $0.receivedBody(bytes, id: id, core: self) }
        switch outcome {
        case .verdict(let verdict, let wake, let progress):
            // Here, not above: a released response's bytes come round
            // again, and so do bytes handed back to pause the hop.
            if let har, case .accepted = verdict { har.receivedBody(bytes, hop: id) }
            progress?.apply()
            wake?.run(by: self)
            return verdict
        case .write(let file, let wake, let progress):
            har?.receivedBody(bytes, hop: id)
            let failed = file.enqueue(Data(bytes))
            progress?.apply()
            // Run whatever happens: a wake-up taken from the machine is
            // the consumer's only one.
            wake?.run(by: self)
            return failed.map { .abort($0) } ?? .accepted
        case .waitForWriter(let file, let exchange):
            if let exchange { file.whenDrained { exchange.resumeReceiving() } }
            return .pause
        case .release(let response, let body):
            // The held response is the result after all; these bytes follow it.
            deliverFinalResponse(response, heldBody: body)
            return hopDidReceiveBody(bytes, id: id)
        }
    }

    func hopDidComplete(_ outcome: TransferOutcome, id: HopID) {
        // Nobody logs or traces this task: a plain end can finish under the
        // hop end's own lock acquisition (`complete` does nothing else then).
        let quiet = log == nil && observation == nil
        let step = guarded.withLock { $0.hopEnded(outcome, id: id, quiet: quiet, originalURL: originalRequest.url) }
        if let observation, step.isCurrent {
            if outcome.tlsChallenge == nil {
                observation.hopEnded(metrics: outcome.metrics, error: outcome.error)
            } else {
                observation.hopStoppedForTLS()
            }
        }
        switch step {
        case .stale, .waitsForPublication:
            return
        case .finished(let wake):
            finished(waking: wake)
        case .plain(let plainEnd):
            endPlainly(plainEnd)
        case .decide(let end, let held):
            finishHop(end, held: held, connected: outcome.metrics.connect != nil || outcome.metrics.reusedConnection)
        }
    }

    /// `finishHop` for a success with nothing held, cached or written to a
    /// file: what `completeWithTransactions` does, from what the hop's end
    /// read already.
    private func endPlainly(_ plain: PlainEnd) {
        guard plain.metricsReadable else {
            complete(error: nil, metrics: nil)
            return
        }
        complete(error: nil, metrics: makeMetrics(plain.transactions, redirectCount: plain.redirectCount))
    }

    // MARK: - Publishing the response

    /// Offers the final response (with a decision) to handlers and consumer;
    /// body bytes wait while handlers decide.
    func deliverFinalResponse(_ response: HTTPURLResponse, heldBody: Data?) {
        deliverFinalResponse(ResponseSource(response), heldBody: heldBody)
    }

    /// - Parameters:
    ///   - consumer: who the response goes to, when the caller read it
    ///     under a lock it took anyway; nil to read it here.
    ///   - inspected: the middleware accepted it already.
    func deliverFinalResponse(
        _ source: ResponseSource, heldBody: Data?, consumer: PublishedConsumer? = nil, inspected: Bool = false
    ) {
        if !inspected, usesMiddleware.load(ordering: .relaxed),
            MiddlewareRunning.inspect(source, heldBody: heldBody, on: self)
        {
            return
        }
        guard hasHandlers else {
            // Made in publishResponse, and only for an events consumer.
            publishResponse(source, decision: nil, heldBody: heldBody, afterHandlers: inspected, consumer: consumer)
            return
        }
        let decision = makeResponseDecision()
        // After inspection the gate is closed already.
        if !inspected { guarded.withLock { $0.responseGoesToHandlers() } }
        askHandlers(decision) { handler, task in
            guard let response = source.response else { return }
            await handler.task(task, didReceive: response, decision: decision)
        } then: { [self] in
            publishResponse(source, decision: decision, heldBody: heldBody, afterHandlers: true)
        }
    }

    /// A decision that tells this task its answer (see
    /// `ResponseDecision.Listener.task`). The cycle it makes while queued or
    /// outstanding ends when it settles (an answer, the next pull, or its
    /// deinit), and `releaseUnconsumed()` ends it when the task goes.
    private func makeResponseDecision() -> ResponseDecision {
        ResponseDecision(listener: .task(self))
    }

    /// - Parameter decision: the one handlers answered; nil when there were
    ///   none, and then one is made only for an events consumer. A collecting
    ///   consumer answers nothing (its decision took `.allow` at once), so
    ///   `data(for:)` skips three allocations and a closure per request.
    func publishResponse(
        _ source: ResponseSource, decision handed: ResponseDecision?, heldBody: Data?, afterHandlers: Bool,
        consumer: PublishedConsumer? = nil
    ) {
        // An events consumer or a download needs Foundation's response now:
        // build it before taking the lock. `data(for:)` builds it at the end,
        // on its own thread.
        let consumer = consumer ?? guarded.withLock { PublishedConsumer($0) }
        let (events, download) = (consumer.events, consumer.download)
        if events || download {
            _ = source.response
        }
        let decision = handed ?? (events ? makeResponseDecision() : nil)
        let published = guarded.withLock {
            $0.publish(source, decision: decision, heldBody: heldBody, afterHandlers: afterHandlers)
        }
        carryOut(published, decision: decision)
    }

    /// The half of publishing a response that runs after the lock.
    private func carryOut(_ published: PublishedResponse, decision: ResponseDecision?) {
        // With no events consumer there is nobody left to answer.
        if published.collecting { decision?.settleWithDefault() }
        published.progress?.apply()
        published.wake?.run(by: self)
        published.resumeReceiving?.resumeReceiving()
        if let error = published.bodyError {
            cancelWith(error)
        } else if let (end, held) = published.pendingEnd {
            finishHop(end, held: held)
        }
    }

    /// Ends the task with `error` whether or not a transfer runs.
    func cancelWith(_ error: URLError) {
        if let exchange = guarded.withLock({ $0.exchange }) {
            exchange.cancel(error: error)
        } else {
            completeWithTransactions(error: error)
        }
    }

    // MARK: - Handlers

    /// Asks the task's handler, then the session's, until one answers; then `then`.
    func askHandlers(
        _ decision: any PendingDecision,
        _ ask: @escaping @Sendable (any SessionTaskDelegate, SessionTask) async -> Void,
        then: @escaping @Sendable () -> Void
    ) {
        let handlers = [delegate, context.delegate].compactMap { $0 }
        let owner = guarded.withLock { $0.owner }
        Task {
            if let owner {
                for handler in handlers where !decision.isSettled {
                    await ask(handler, owner)
                }
            }
            then()
        }
    }

    /// Hands a redirect or challenge to the handlers, then to the events
    /// consumer; with nobody left to ask, it takes its default at once.
    func offerDecision(
        _ event: TaskEvent, _ decision: any PendingDecision,
        ask: @escaping @Sendable (any SessionTaskDelegate, SessionTask) async -> Void
    ) {
        if let log { log.decision(Self.decisionName(event), "offered") }
        let publish: @Sendable () -> Void = { [self] in
            let (wake, toConsumer) = guarded.withLock { $0.offer(event) }
            if !toConsumer { decision.settleWithDefault() }
            wake?.run(by: self)
        }
        if hasHandlers {
            askHandlers(decision, ask, then: publish)
        } else {
            publish()
        }
    }
}
