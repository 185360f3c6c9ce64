import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a hop's good end does when the hop's `CacheStage` has something for
/// it: a 304 that revalidated is answered by a hop that replays the stored
/// response; a captured response is offered with a `willCacheResponse`
/// decision, then stored as answered.
enum CacheAtHopEnd {
    /// At the good end of a hop with no decision to follow. Returns false
    /// when the cache has nothing to do (the task then completes).
    static func finish(on task: some PolicyHost) -> Bool {
        let hop = task.machine { $0.cacheStageOfHop }
        guard let (stage, request) = hop, let end = stage.takeEnd() else { return false }
        switch end {
        case .answerWithStored(let stored):
            task.observation?.cacheHit()
            stage.store(stored)
            task.answerLocally(request, responder: StoredResponseResponder(stored: stored), credential: nil)
        case .offerForStoring(let captured):
            let decision = CacheDecision(proposedResponse: captured)
            decision.core.onSettle { answer in
                if case .store(let response) = answer { stage.store(response) }
                task.completeWithTransactions(error: nil)
            }
            task.offerDecision(.willCacheResponse(decision), decision.core) { handler, task in
                await handler.task(task, willCacheResponse: decision)
            }
        }
        return true
    }
}
