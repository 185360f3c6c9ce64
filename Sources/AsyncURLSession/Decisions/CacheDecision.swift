import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response the session's cache is about to store, after its body has
/// arrived and before the task completes (Apple's `willCacheResponse`):
/// store it as proposed, store a changed one, or store nothing. Offered
/// only for responses the cache may store, never for ones it served.
///
/// Default (no answer by the next pull, or the decision dropped): store
/// the proposed response.
public final class CacheDecision: Sendable {
    public enum Answer: Sendable {
        case store(CachedResponse)
        case doNotStore
    }

    public let proposedResponse: CachedResponse
    let core: DecisionCore<Answer>

    init(proposedResponse: CachedResponse) {
        self.proposedResponse = proposedResponse
        core = DecisionCore(default: .store(proposedResponse))
    }

    deinit { core.settleWithDefault() }

    /// Store the proposed response.
    public func store() { core.settle(.store(proposedResponse)) }

    /// Store this response instead (changed fields, body or storage policy).
    public func store(_ response: CachedResponse) { core.settle(.store(response)) }

    /// Store nothing.
    public func doNotStore() { core.settle(.doNotStore) }

    public var answer: Answer? { core.answer }
}
