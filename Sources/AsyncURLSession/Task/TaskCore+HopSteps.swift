import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The task as the host of the policies above its hops (`PolicyHost`):
/// what their steps may ask of it, and nothing else.
extension TaskCore: PolicyHost {
    /// A hop ended: the policies decide what follows (`HopPolicies.finish`).
    /// - Parameter connected: the hop's transfer had connected (a time-out
    ///   before is worth a retry, one after is not).
    func finishHop(_ end: HopEnd, held: HopState.Held?, connected: Bool = true) {
        let retry = retries.load(ordering: .relaxed) ? RetryScheduling.candidate(on: self, connected: connected) : nil
        HopPolicies.finish(
            HopOutcome(
                end: end, held: held, waitsForConnectivity: context.configuration.waitsForConnectivity, retry: retry),
            on: self)
    }

    func machine<Result>(_ transition: (inout TaskMachine) -> sending Result) -> sending Result {
        guarded.withLock { transition(&$0) }
    }

    /// Starts a hop with `request`, after the middleware prepared it.
    func startHop(_ request: URLRequest, credential: HopCredential?) {
        guard usesMiddleware.load(ordering: .relaxed) else {
            startPreparedHop(request, credential: credential)
            return
        }
        MiddlewareRunning.prepare(request, credential: credential, on: self)
    }

    func sendPrepared(_ request: URLRequest, credential: HopCredential?) {
        startPreparedHop(request, credential: credential)
    }

    func answerLocally(_ request: URLRequest, responder: any LocalResponder, credential: HopCredential?) {
        launchLocalHop(request, responder: responder, cache: nil, credential: credential)
    }

    func deliverInspected(_ source: ResponseSource, heldBody: Data?) {
        deliverFinalResponse(source, heldBody: heldBody, inspected: true)
    }

    /// The held 3xx/401/407 and its body become the task's result. The hop is
    /// over, so the task ends right after the response is published.
    func stopAtHeldResponse(_ held: HopState.Held) {
        // A proxy's refused CONNECT has no response to deliver: its error ends the task.
        if let error = held.connectFailure {
            guarded.withLock { $0.hop.releaseHeld() }
            completeWithTransactions(error: error)
            return
        }
        guarded.withLock { $0.deliverHeldAfterAll() }
        deliverFinalResponse(held.response, heldBody: held.body)
    }

    func announce(
        _ event: TaskEvent, consumerFirst: Bool,
        tell: @escaping @Sendable (any SessionTaskDelegate, SessionTask) async -> Void
    ) {
        let handlers = [delegate, context.delegate].compactMap { $0 }
        let publish: @Sendable () -> SessionTask? = { [self] in
            let (wake, owner) = guarded.withLock { $0.announce(event) }
            wake?.run(by: self)
            return owner
        }
        if consumerFirst {
            let owner = publish()
            guard !handlers.isEmpty, let owner else { return }
            Task { for handler in handlers { await tell(handler, owner) } }
            return
        }
        guard !handlers.isEmpty, let owner = guarded.withLock({ $0.owner }) else {
            _ = publish()
            return
        }
        Task {
            for handler in handlers { await tell(handler, owner) }
            _ = publish()
        }
    }
}
