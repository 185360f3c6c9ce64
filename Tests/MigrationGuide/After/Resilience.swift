import Foundation
import URLSessionCompat

/// MIGRATION.md's "Retries and middleware": a bearer token refreshed once on
/// 401, and a session that retries what is safe to retry.
actor TokenStore {
    private(set) var current = "expired"
    private let fresh: String

    init(fresh: String) { self.fresh = fresh }

    func refresh() { current = fresh }
}

struct BearerToken: RequestMiddleware {
    let tokens: TokenStore

    func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
        var request = request
        request.setValue("Bearer \(await tokens.current)", forHTTPHeaderField: "Authorization")
        return .send(request)
    }

    func inspect(_ response: HTTPURLResponse, request: URLRequest, attempt: MiddlewareAttempt) async throws
        -> MiddlewareResponseStep
    {
        guard response.statusCode == 401, attempt.number == 1 else { return .accept }
        await tokens.refresh()
        return .retry(request)
    }
}

enum ResilientSession {
    static func make(tokens: TokenStore) -> URLSession {
        let configuration = URLSessionConfiguration.default
        configuration.retryPolicy = .standard
        configuration.timeoutIntervalForConnect = 5
        configuration.middleware = [BearerToken(tokens: tokens)]
        return URLSession(configuration: configuration)
    }
}
