internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Who answers a hop. Chosen in one place (`HopRouter.route`), carried out
/// by the task (`TaskCore.launchHop`), which knows only the three answers.
enum HopRoute {
    /// The response cache answers with a stored response; nothing is sent.
    case cache(CachedResponse)
    /// A `LocalTransport`'s responder (a stub, a URLProtocol class, the
    /// background agent) answers `local`, what would have been sent.
    case local(any LocalResponder, LocalRequest, TransferRequest, HopCache?)
    /// libcurl sends it. `HopCache`: the hop's part of the response cache.
    case engine(TransferRequest, HopCache?)
    /// Refused before anything is sent: a request that cannot be made
    /// (no URL, a header with CR or LF), `only-if-cached` with nothing stored.
    case refused(URLError)
}

/// Chooses each hop's responder, in this order: the response cache (its
/// plan may also make the hop revalidate), then the session's local
/// transport if one of its responders takes the request, else the engine.
/// What the task reads for it is passed in (borrowed: nothing is copied
/// per hop); what costs something to compute (the TLS-challenge settings,
/// a local request's progress reporter) is asked for only where needed.
enum HopRouter {
    /// - Parameters:
    ///   - kind: the task's kind (only a data task's GET is answered from the cache).
    ///   - proxyCredential: what goes to the session's proxy, if it has one.
    ///   - sentReporter: for a local responder's reads of the body.
    static func route(
        _ request: URLRequest, body: TransferRequest.Body, credential: HopCredential?,
        context: SessionContext, originalRequest: URLRequest, taskIdentifier: Int, observation: TaskObservation?,
        kind: @autoclosure () -> TaskKind, unixSocket: UnixSocket?,
        proxyCredential: HopCredential?, tlsChallenges: (URLRequest) -> TLSChallengeHop?,
        sentReporter: () -> @Sendable (Int64, Int64) -> Void
    ) -> HopRoute {
        let sent: URLRequest
        let hopCache: HopCache?
        switch CacheStage.plan(for: request, kind: kind(), configuration: context.configuration) {
        case .network(var request, let cache):
            // Trace headers (issue 47): on the request as sent only, not
            // on the task's `currentRequest`.
            observation?.hop(&request, via: "network")
            (sent, hopCache) = (request, cache)
        case .stored(let stored):
            return .cache(stored)
        case .fail(let error):
            return .refused(error)
        }
        // Only asked when the session adds headers (most add none): a hop
        // to another origin than the task's gets none of its sensitive ones.
        let crossOrigin = !context.configuration.httpAdditionalHeaders.isEmpty
            && !RedirectPolicy.sameOrigin(originalRequest.url, request.url)
        let prepared = RequestPreparation.transferRequest(
            for: sent, configuration: context.configuration, credential: credential, body: body, crossOrigin: crossOrigin,
            tlsChallenges: tlsChallenges(sent), proxyCredential: proxyCredential,
            route: context.connectRoute, unixSocket: unixSocket)
        let transferRequest: TransferRequest
        switch prepared {
        case .success(let made): transferRequest = made
        case .failure(let error): return .refused(error)
        }
        if let transport = context.localTransport, transport.isActive {
            let local = LocalRequest(
                prepared: transferRequest, original: sent, credential: credential, taskIdentifier: taskIdentifier,
                reportSent: sentReporter())
            if let responder = transport.responder(for: local) {
                return .local(responder, local, transferRequest, hopCache)
            }
        }
        return .engine(transferRequest, hopCache)
    }
}

extension LocalRequest {
    /// What a `LocalTransport` sees for a hop: what `prepared` would put on
    /// the wire, with its body (whose reads report upload progress).
    init(
        prepared: TransferRequest, original: URLRequest, credential: HopCredential?, taskIdentifier: Int,
        reportSent: @escaping @Sendable (Int64, Int64) -> Void
    ) {
        var request = URLRequest(url: URL(string: prepared.url) ?? original.url!)
        request.httpMethod = prepared.method
        request.timeoutInterval = original.timeoutInterval
        request.cachePolicy = original.cachePolicy
        for (name, value) in prepared.headers { request.addValue(value, forHTTPHeaderField: name) }
        // What libcurl adds itself.
        if let userAgent = prepared.userAgent, request.value(forHTTPHeaderField: "User-Agent") == nil {
            request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        }
        if let encoding = prepared.acceptEncoding, !encoding.isEmpty {
            request.setValue(encoding, forHTTPHeaderField: "Accept-Encoding")
        }
        if let hop = credential, hop.method == NSURLAuthenticationMethodHTTPBasic,
            let user = hop.credential.user, request.value(forHTTPHeaderField: "Authorization") == nil
        {
            let token = Data("\(user):\(hop.credential.password ?? "")".utf8).base64EncodedString()
            request.setValue("Basic \(token)", forHTTPHeaderField: "Authorization")
        }
        let source: LocalRequestBody.Source
        switch prepared.body {
        case .none: source = .none
        case .data(let data): source = .data(data)
        case .file(let url): source = .file(url)
        case .stream(let stream, _): source = .stream(stream)
        }
        self.init(
            request: request, body: LocalRequestBody(source, expectedLength: prepared.bodyLength ?? -1, progress: reportSent),
            credential: credential?.credential, taskIdentifier: taskIdentifier)
    }
}
