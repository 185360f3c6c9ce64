import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TaskEvent {
    /// The decision this event carries, if any.
    var decision: OutstandingDecision? {
        switch self {
        case .redirect(let decision): return .redirect(decision)
        case .challenge(let decision): return .challenge(decision)
        case .response(_, let decision): return .response(decision)
        case .needBodyStream(let decision): return .bodyStream(decision)
        case .willCacheResponse(let decision): return .cache(decision)
        case .data, .metrics, .uploadProgress, .downloadProgress, .downloaded, .resumed, .informationalResponse,
            .waitingForConnectivity, .trailers, .retrying:
            return nil
        }
    }
}

/// The decision of an event handed to the consumer, by its concrete type.
/// Why not `any PendingDecision`: settled through the protocol, the generic
/// `DecisionCore` ran unspecialized and looked up its generic metadata on
/// every call, once per small request of an events consumer.
enum OutstandingDecision: Sendable {
    case response(ResponseDecision)
    case redirect(RedirectDecision)
    case challenge(ChallengeDecision)
    case bodyStream(BodyStreamDecision)
    case cache(CacheDecision)

    func settleWithDefault() {
        switch self {
        case .response(let decision): decision.settleWithDefault()
        case .redirect(let decision): decision.core.settleWithDefault()
        case .challenge(let decision): decision.core.settleWithDefault()
        case .bodyStream(let decision): decision.core.settleWithDefault()
        case .cache(let decision): decision.core.settleWithDefault()
        }
    }
}
