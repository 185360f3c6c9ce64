internal import CurlEngine
import Foundation

/// Hops answered without the network (`LocalTransfer`), and what such a
/// hop asks of its task (`LocalTransferDelegate`).
extension TaskCore: LocalTransferDelegate {
    /// Starts a hop answered by `responder` instead of the network: a
    /// cache hit (`request` is the hop's own) or a `LocalTransport`'s
    /// responder (`local` is the request as sent, with its body). `cache`:
    /// the hop's part of the response cache, whose stage then stands
    /// between the responder and the task.
    func launchLocalHop(
        _ request: URLRequest, responder: any LocalResponder, cache: HopCache?,
        local: LocalRequest? = nil, credential: HopCredential? = nil, expectedToSend: Int64 = 0
    ) {
        let id = HopID.local()
        let stage = cache.map { CacheStage($0, url: request.url, authenticated: credential != nil, task: self) }
        let transfer = LocalTransfer(id: id, delegate: stage ?? self, fetchType: responder.fetchType)
        let started = beginHop(
            HopState(request: request, credential: credential, cacheStage: stage), via: transfer,
            expectedToSend: expectedToSend)
        let local = local ?? LocalRequest(
            request: request, body: LocalRequestBody(.none, expectedLength: 0) { _, _ in }, credential: nil,
            taskIdentifier: identifier)
        guard let suspended = started else {
            local.body.close()
            return
        }
        if suspended { transfer.suspend() }
        let configuration = context.configuration
        // A background transfer idles while the agent waits to retry: the
        // agent keeps its own time.
        let idle = context.background == nil ? RequestPreparation.idleTimeout(of: request, configuration: configuration) : 0
        transfer.start(
            responder, request: local,
            idleTimeout: idle,
            resourceTimeout: configuration.timeoutIntervalForResource)
    }

    /// Makes `exchange` the task's current hop, if the task still wants one:
    /// nil when it does not (cancelled meanwhile), else whether the task is
    /// suspended (the exchange then starts suspended). Whoever answers the
    /// hop, a local transfer here or a test's fake exchange, begins it so.
    func beginHop(_ hop: HopState, via exchange: any HopExchange, expectedToSend: Int64 = 0) -> Bool? {
        guarded.withLock { $0.beginHopIfWanted(hop, via: exchange, expectedToSend: expectedToSend) }
    }

    /// A local responder's own challenge (`LocalResponseWriter.challenge`),
    /// offered as a network 401's is; its answer goes back to the responder.
    func offerLocalChallenge(_ decision: ChallengeDecision) {
        offerDecision(.challenge(decision), decision.core) { handler, task in
            await handler.task(task, didReceive: decision)
        }
    }
}
