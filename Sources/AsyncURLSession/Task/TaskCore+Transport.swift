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

    /// The request a `LocalTransport` sees for a hop: what `prepared` would
    /// put on the wire, with its body (whose reads report upload progress).
    func localRequest(
        for prepared: TransferRequest, original: URLRequest, credential: HopCredential?
    ) -> LocalRequest {
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
        let expected = prepared.bodyLength ?? -1
        let body = LocalRequestBody(source, expectedLength: expected) { [weak self] sent, expected in
            guard let self, let exchange = guarded.withLock({ $0.exchange }) else { return }
            exchange.reportSent(sent, expected: expected)
        }
        return LocalRequest(
            request: request, body: body, credential: credential?.credential, taskIdentifier: identifier)
    }
}
