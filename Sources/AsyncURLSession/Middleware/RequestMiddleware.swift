import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An interceptor around a task's requests: it sees each attempt's request
/// before it goes and the response head before anyone else does, and can
/// change the request, answer it by itself, or ask for another attempt.
/// Set on `SessionConfiguration.middleware` (every task of the session) or
/// `SessionTask.middleware` (one task, inside the session's).
///
/// A chain runs in order for requests (the session's, then the task's) and
/// in reverse for responses, as layers around the network. Both methods
/// have defaults that pass, so a middleware implements what it needs:
///
/// ```swift
/// struct BearerToken: RequestMiddleware {
///     let tokens: TokenStore
///     func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
///         var request = request
///         request.setValue("Bearer \(await tokens.current)", forHTTPHeaderField: "Authorization")
///         return .send(request)
///     }
///     func inspect(_ response: HTTPURLResponse, request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareResponseStep {
///         guard response.statusCode == 401, attempt.number == 1 else { return .accept }
///         await tokens.refresh()
///         return .retry(request)  // prepare signs it again with the new token
///     }
/// }
/// ```
///
/// Bodies do not pass through a middleware: the request body is the
/// task's (sent again for another attempt where it can be: data, a file, a
/// new body stream asked for), the response body streams to the consumer
/// once every middleware accepted the head, with no copy.
///
/// A middleware that throws ends the task with a `URLError` whose
/// underlying error (`NSUnderlyingErrorKey`) is what it threw. Cancelling
/// the task cancels the Swift task a waiting middleware runs in.
public protocol RequestMiddleware: Sendable {
    /// Where in the task it runs (default `.attempt`).
    var level: MiddlewareLevel { get }

    /// The request an attempt is about to send. Return `.send` with it (as
    /// it is or changed: headers, URL, method) or `.respond` to answer it
    /// without the network. A later attempt's request may already carry
    /// what this method added to an earlier one (a retry sends that
    /// attempt's request again): set fields rather than append them.
    func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep

    /// A response head the task is about to deliver (its body waits).
    /// `.accept` lets it through; `.retry` drops it and makes another
    /// attempt with the request given. Redirects and authentication
    /// challenges the task decides are not shown here; their next requests
    /// are (`prepare`, at the `.attempt` level).
    func inspect(_ response: HTTPURLResponse, request: URLRequest, attempt: MiddlewareAttempt) async throws
        -> MiddlewareResponseStep
}

extension RequestMiddleware {
    public var level: MiddlewareLevel { .attempt }

    public func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
        .send(request)
    }

    public func inspect(_ response: HTTPURLResponse, request: URLRequest, attempt: MiddlewareAttempt) async throws
        -> MiddlewareResponseStep
    {
        .accept
    }
}

/// Where in a task a middleware runs, as OkHttp's application and network
/// interceptors.
public enum MiddlewareLevel: Sendable, Hashable {
    /// `prepare` sees the task's first request only; `inspect` every
    /// response the task delivers. For what a caller means (signing an API
    /// call once, mapping its result).
    case task
    /// `prepare` sees every attempt's request: redirects, authentication
    /// retries, retries of the retry policy and of a middleware; `inspect`
    /// every response the task delivers. For what goes on the wire.
    case attempt
}

/// Which attempt of a task a middleware sees.
public struct MiddlewareAttempt: Sendable {
    /// 1 for the task's first request, then one more for each request sent
    /// (redirects, retries).
    public let number: Int
    /// The task's `taskIdentifier`.
    public let taskIdentifier: Int
    /// The request the task was made with.
    public let originalRequest: URLRequest
}

/// What `RequestMiddleware.prepare` decides.
public enum MiddlewareRequestStep: Sendable {
    /// Send this request.
    case send(URLRequest)
    /// Answer with this response and body; nothing goes to the network.
    case respond(HTTPURLResponse, body: Data)
}

/// What `RequestMiddleware.inspect` decides.
public enum MiddlewareResponseStep: Sendable {
    /// Let the response through.
    case accept
    /// Drop it (its body is not read) and send this request instead.
    case retry(URLRequest)
}
