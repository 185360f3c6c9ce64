internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A task's middleware in order (the session's, then the task's), run as
/// layers: requests outward-in, responses inward-out.
struct MiddlewareChain: Sendable {
    let layers: [any RequestMiddleware]

    var isEmpty: Bool { layers.isEmpty }

    /// Every layer's `prepare` that applies to `attempt`, until one answers.
    func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
        var request = request
        for layer in layers where layer.level == .attempt || attempt.number == 1 {
            try Task.checkCancellation()
            switch try await layer.prepare(request, attempt: attempt) {
            case .send(let next): request = next
            case .respond(let response, let body): return .respond(response, body: body)
            }
        }
        return .send(request)
    }

    /// Every layer's `inspect`, innermost first, until one asks for a retry.
    func inspect(_ response: HTTPURLResponse, request: URLRequest, attempt: MiddlewareAttempt) async throws
        -> MiddlewareResponseStep
    {
        for layer in layers.reversed() {
            try Task.checkCancellation()
            if case .retry(let next) = try await layer.inspect(response, request: request, attempt: attempt) {
                return .retry(next)
            }
        }
        return .accept
    }

    /// The task's error for what a middleware threw.
    static func failure(_ error: any Error, url: String?) -> URLError {
        if let urlError = error as? URLError { return urlError }
        if error is CancellationError { return URLError.make(.cancelled, url: url, reason: "cancelled") }
        // The task names the failing URL when it ends (`namingFailingURL`).
        return URLError(.unknown, userInfo: [
            NSUnderlyingErrorKey: error as NSError,
            NSLocalizedDescriptionKey: "A request middleware failed: \(error)",
        ])
    }
}
