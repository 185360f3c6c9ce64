import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the task does at a hop's good end when the hop's `CacheStage` has
/// something for it: a 304 that revalidated is answered by a hop that
/// replays the stored response; a captured response is offered with a
/// `willCacheResponse` decision, then stored as answered.
extension TaskCore {
    /// At the good end of a hop with no decision to follow. Returns false
    /// when the cache has nothing to do (the caller completes).
    func finishWithCache() -> Bool {
        let hop = guarded.withLock { $0.cacheStageOfHop }
        guard let (stage, request) = hop, let end = stage.takeEnd() else { return false }
        switch end {
        case .answerWithStored(let stored):
            observation?.cacheHit()
            stage.store(stored)
            launchLocalHop(request, responder: StoredResponseResponder(stored: stored), cache: nil)
        case .offerForStoring(let captured):
            let decision = CacheDecision(proposedResponse: captured)
            decision.core.onSettle { [self] answer in
                if case .store(let response) = answer { stage.store(response) }
                completeWithTransactions(error: nil)
            }
            offerDecision(.willCacheResponse(decision), decision.core) { handler, task in
                await handler.task(task, willCacheResponse: decision)
            }
        }
        return true
    }
}
