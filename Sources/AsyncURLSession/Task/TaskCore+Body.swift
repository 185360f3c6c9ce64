internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TaskCore {
    /// Whether sending `request` again needs a new body stream (asked for
    /// with a `needBodyStream` decision).
    func resendNeedsBodyStream(_ request: URLRequest) -> Bool {
        if case .needsStream = HopBody.of(request, upload: upload) { return true }
        return false
    }

    /// Starts a hop whose request the middleware prepared (`startHop`):
    /// finds its body (asking for a stream if needed), then the transfer.
    func startPreparedHop(_ request: URLRequest, credential: HopCredential?) {
        let request = hstsUpgraded(request)
        switch HopBody.of(request, upload: upload) {
        case .ready(let body):
            launchHop(request, credential: credential, body: body)
        case .needsStream(let length):
            let firstUse = guarded.withLock { $0.takeFirstUseOfRequestBodyStream() }
            if case .none = upload, firstUse, let stream = request.httpBodyStream {
                // The request's own stream serves the first send only.
                launchStreamedHop(request, credential: credential, source: .inputStream(InputStreamBox(stream)), length: length)
                return
            }
            let decision = BodyStreamDecision()
            decision.core.onSettle { [weak self] answer in
                guard let self else { return }
                switch answer {
                case .source(let source):
                    launchStreamedHop(request, credential: credential, source: source, length: length)
                case .none:
                    completeWithTransactions(error: URLError.make(
                        .requestBodyStreamExhausted, url: failingURLString,
                        reason: "The request body must be sent (again) and no body stream was provided; "
                            + "answer the needBodyStream decision."))
                }
            }
            offerDecision(.needBodyStream(decision), decision.core) { handler, task in
                await handler.task(task, needsBodyStream: decision)
            }
        }
    }

    /// HSTS: a known host is reached over https, before anything is sent.
    private func hstsUpgraded(_ request: URLRequest) -> URLRequest {
        guard let store = context.configuration.hstsStore, let url = request.url, let upgraded = store.upgraded(url)
        else { return request }
        var request = request
        request.url = upgraded
        return request
    }

    private func launchStreamedHop(
        _ request: URLRequest, credential: HopCredential?, source: BodySource, length: Int64?
    ) {
        let sendsTrailers = if case .chunks(let chunks) = source { chunks.sendsTrailers } else { false }
        let stream = BodyStream(sendsTrailers: sendsTrailers)
        switch source {
        case .chunks(let chunks):
            // Cancelled with the body stream: a sequence that waits for its
            // next chunk (full duplex, after the response ended) stops there.
            let pump = Task { await chunks.pump(stream) }
            stream.onCancel { pump.cancel() }
        case .inputStream(let box):
            InputStreamPump.start(reading: box, into: stream)
        }
        launchHop(request, credential: credential, body: .stream(stream, length: length))
    }

    /// Starts the engine transfer of a hop whose body is known.
    private func launchHop(_ request: URLRequest, credential: HopCredential?, body: TransferRequest.Body) {
        let sent: URLRequest
        let hopCache: HopCache?
        switch CacheStage.plan(for: request, kind: self.kind, configuration: context.configuration) {
        case .network(var request, let cache):
            // Trace headers (issue 47): on the request as sent only, not
            // on the task's `currentRequest`.
            observation?.hop(&request, via: "network")
            (sent, hopCache) = (request, cache)
        case .stored(let stored):
            log?.hop(request.httpMethod ?? "GET", url: request.url?.absoluteString ?? "-", via: "cache", headers: [])
            if let observation {
                var hop = request
                observation.hop(&hop, via: "cache")
                observation.cacheHit()
            }
            launchLocalHop(request, responder: StoredResponseResponder(stored: stored), cache: nil)
            return
        case .fail(let error):
            completeWithTransactions(error: error)
            return
        }
        let configuration = context.configuration
        // Only asked when the session adds headers (most add none): a hop
        // to another origin than the task's gets none of its sensitive ones.
        let crossOrigin = !configuration.httpAdditionalHeaders.isEmpty
            && !RedirectPolicy.sameOrigin(originalRequest.url, request.url)
        let proxyCredential = configuration.proxy == nil ? nil : ProxyAuthentication.credential(on: self)
        let prepared = RequestPreparation.transferRequest(
            for: sent, configuration: configuration, credential: credential, body: body, crossOrigin: crossOrigin,
            tlsChallenges: TLSChallenging.hopSettings(for: sent, on: self), proxyCredential: proxyCredential, route: context.connectRoute,
            unixSocket: unixSocket)
        guard case .success(let transferRequest) = prepared else {
            if case .stream(let stream, _) = body { stream.finish() }
            if case .failure(let error) = prepared { completeWithTransactions(error: error) }
            return
        }
        let expectedToSend = transferRequest.bodyLength ?? -1
        har?.sent(transferRequest)
        if let transport = context.localTransport, transport.isActive {
            let local = localRequest(for: transferRequest, original: sent, credential: credential)
            if let responder = transport.responder(for: local) {
                log?.hop(transferRequest.method, url: transferRequest.url, via: "local transport", headers: transferRequest.headers)
                launchLocalHop(
                    request, responder: responder, cache: hopCache, local: local, credential: credential,
                    expectedToSend: expectedToSend)
                return
            }
        }
        let engine = engine
        let placement = context.placement
        let url = transferRequest.url
        let stage = hopCache.map { CacheStage($0, url: request.url, authenticated: credential != nil, task: self) }
        let hop = HopState(request: request, credential: credential, proxyCredential: proxyCredential, cacheStage: stage)
        let begun = guarded.withLock {
            // Made only for a transfer that starts: making one places it on
            // an engine thread.
            $0.beginHopIfWanted(hop, expectedToSend: expectedToSend) {
                EngineExchange(transfer: engine.makeTransferID(for: url, in: placement), session: context.engineID)
            }
        }
        let started = begun.map { ($0.exchange, $0.suspended, $0.metricsReadable || observation?.wantsHopMetrics == true) }
        guard let (exchange, suspended, collectsMetrics) = started else {
            if case .stream(let stream, _) = body { stream.finish() }
            return
        }
        log?.hop(transferRequest.method, url: transferRequest.url, via: "network", headers: transferRequest.headers)
        engine.start(
            exchange.transfer, in: placement, request: transferRequest, collectsMetrics: collectsMetrics,
            delegate: stage ?? self)
        if suspended { exchange.suspend() }
        // A cancel() that read this transfer's ID may have queued its stop
        // before the start above; the engine ignores a stop for a transfer
        // it does not know, so it is sent again now that it does. Such a
        // stop was queued before the start, under the command queue's lock,
        // after `cancelRequested` was set: this load sees it.
        if cancelRequested.load(ordering: .relaxed),
            let cancellation = guarded.withLock({ $0.cancellationUnderWay })
        {
            exchange.cancel(error: cancellation)
        }
    }
}
