import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the policies above the hop (retries, middleware, connectivity,
/// redirects and challenges, trust) read and change of the task, each one
/// transition. The decisions themselves are the policies' own (`Policy/`,
/// `Middleware/`); these only keep the task's fields consistent.
extension TaskMachine {
    // MARK: Retries

    /// What the retry rules read after a hop ended; nil without a policy.
    func retryInputs() -> (policy: RetryPolicy, attemptsMade: Int, request: URLRequest, responseBegun: Bool, events: Bool)? {
        retry.map { retry in
            (retry.policy, retry.attemptsMade, hop.request, pipeline.responseSource != nil, pipeline.consumer == .events)
        }
    }

    /// A retry follows: one more attempt made, the held response let go.
    mutating func retryStarts() {
        retry?.retrying()
        hop.releaseHeld()
    }

    /// The task's retry policy changes (nil: none).
    mutating func setRetryPolicy(_ policy: RetryPolicy?) {
        guard let policy else {
            retry = nil
            return
        }
        if retry == nil { retry = RetryState(policy) } else { retry?.policy = policy }
    }

    // MARK: Middleware

    /// A hop's request goes through the middleware: the task's own layers
    /// and the attempt's number.
    mutating func middlewareAttemptStarts() -> (taskLayers: [any RequestMiddleware], attempt: Int) {
        (middleware.taskLayers, middleware.attemptStarts())
    }

    /// A response goes through the middleware's `inspect`: it waits as for
    /// handlers; what the chain is told of the attempt.
    mutating func inspectionStarts() -> (taskLayers: [any RequestMiddleware], attempt: Int, request: URLRequest, hop: HopID?) {
        responseGoesToHandlers()
        return (middleware.taskLayers, middleware.currentAttempt, hop.request, transferID)
    }

    /// A middleware asked for another attempt: the response under
    /// inspection is dropped, the hop `id` left (its exchange returned, to
    /// stop), and whether one more middleware retry is allowed.
    mutating func abandonHop(_ id: HopID?) -> (allowed: Bool, left: (any HopExchange)?) {
        _ = publication.published()
        _ = pipeline.openBodyGate()
        let left = id.flatMap { endHop($0) }
        return (middleware.retryAsked(), left)
    }

    // MARK: Connectivity

    /// A hop failed while the task waits for connectivity: what follows,
    /// and the hop's request and credential for the next try.
    mutating func connectivityHopFailed(
        _ code: URLError.Code, elapsed: TimeInterval, resourceTimeout: TimeInterval
    ) -> (ConnectivityRetry.Action, URLRequest, HopCredential?) {
        let action = connectivity.hopFailed(
            code, elapsed: elapsed, resourceTimeout: resourceTimeout, responseBegun: pipeline.responseSource != nil)
        return (action, hop.request, hop.credential)
    }

    // MARK: Decisions and events

    /// An event for the events consumer (a decision, a notice): the consumer
    /// to wake, and whether there is one (else the decision takes its
    /// default).
    mutating func offer(_ event: TaskEvent) -> (wake: Wake?, toConsumer: Bool) {
        let toConsumer = pipeline.consumer == .events
        return (wake(for: pipeline.offer(event)), toConsumer)
    }

    /// A held response is delivered after all: it is the result, and the
    /// hop's end waits for its publication.
    mutating func deliverHeldAfterAll() {
        hop.releaseHeld()
        publication.endAfterPublishing()
    }

    /// A proxy refused CONNECT with 407: held as a forwarded 407 would be.
    mutating func holdConnectRefusal(methods: [String], error: URLError) -> HopState.Held? {
        hop.holdConnectRefusal(methods: methods, error: error)
        return hop.held
    }

    // MARK: Trust

    /// The current hop's request and credential, and how many TLS challenges
    /// the task asked so far (this one counted).
    mutating func tlsChallengeAsked() -> (URLRequest, HopCredential?, Int) {
        (hop.request, hop.credential, connection().countChallenge())
    }

    /// A certificate failure starts a trust diagnosis (once per task): the
    /// hop's request, and its credential when the diagnosis started.
    mutating func startTrustDiagnosis(of error: URLError) -> (URLRequest, HopCredential?, Bool) {
        guard connection().startDiagnosis(of: error) else { return (hop.request, nil, false) }
        return (hop.request, hop.credential, true)
    }
}

extension TaskMachine {
    /// What a retry sends again, and the budget it draws on.
    var retryResend: (request: URLRequest, credential: HopCredential?, budget: RetryBudget?) {
        (hop.request, hop.credential, retry?.policy.budget)
    }

    /// A notice (a retry, waiting for connectivity) for the events
    /// consumer; the public task, for the handlers.
    mutating func announce(_ event: TaskEvent) -> (Wake?, SessionTask?) {
        (wake(for: pipeline.offer(event)), owner)
    }

    /// What a challenge offer reads: the hop's request, the credentials it
    /// sent (origin, proxy) and the methods rejected so far.
    var challengeInputs: (URLRequest, HopCredential?, HopCredential?, Set<String>) {
        (hop.request, hop.credential, hop.proxyCredential, history.rejectedMethods)
    }

    /// The hop's cache stage, with the hop's request.
    var cacheStageOfHop: (CacheStage, URLRequest)? {
        hop.cacheStage.map { ($0, hop.request) }
    }

    /// The exchange a consumer with no Swift task to wait on may stand in
    /// for the engine on: before any body byte, while the task runs.
    var exchangeBeforeBody: (any HopExchange)? {
        pipeline.end == nil && pipeline.bytesReceived == 0 ? exchange : nil
    }

    /// An inspection ended: a hop end it held back, and the exchange to stop.
    mutating func inspectionEnds() -> (HopEnd?, (any HopExchange)?) {
        (publication.published(), exchange)
    }

    /// The TLS-challenge answers the hop to `key` goes with, and whether a
    /// trust diagnosis is under way.
    func tlsAnswers(for key: String) -> (Bool, TaskTrustAnswer?, TaskClientCertificateAnswer?) {
        let answers = connectionState
        return (answers?.trustDiagnosis != nil, answers?.trustAnswers[key], answers?.clientCertificateAnswers[key])
    }
}

extension TaskMachine {
    /// `takeCollectedResult()`: the collected result, nil before the end.
    mutating func takeCollectedIfEnded() -> Result<TaskCore.CollectedHandOff, URLError>? {
        pipeline.end.map { takeCollected($0) }
    }

    /// The response's trailers, once the task ended.
    var trailersAtEnd: ResponseTrailers? {
        pipeline.end == nil ? nil : pipeline.trailers
    }

    /// `suspend()`: the pipeline's answer and the exchange to suspend.
    mutating func suspend() -> (TaskPipeline.SuspendAction, (any HopExchange)?) {
        (pipeline.suspend(), exchange)
    }
}
