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

    /// Starts a hop whose body is known, answered by whoever `HopRouter` chose.
    private func launchHop(_ request: URLRequest, credential: HopCredential?, body: TransferRequest.Body) {
        let proxyCredential = context.configuration.proxy == nil ? nil : ProxyAuthentication.credential(on: self)
        let route = HopRouter.route(
            request, body: body, credential: credential, context: context, originalRequest: originalRequest,
            taskIdentifier: identifier, observation: observation,
            kind: self.kind, unixSocket: unixSocket,
            proxyCredential: proxyCredential,
            tlsChallenges: { TLSChallenging.hopSettings(for: $0, on: self) },
            sentReporter: { reportsLocalSends })
        switch route {
        case .refused(let error):
            if case .stream(let stream, _) = body { stream.finish() }
            completeWithTransactions(error: error)
        case .cache(let stored):
            log?.hop(request.httpMethod ?? "GET", url: request.url?.absoluteString ?? "-", via: "cache", headers: [])
            if let observation {
                var hop = request
                observation.hop(&hop, via: "cache")
                observation.cacheHit()
            }
            launchLocalHop(request, responder: StoredResponseResponder(stored: stored), cache: nil)
        case .local(let responder, let local, let transferRequest, let hopCache):
            har?.sent(transferRequest)
            log?.hop(transferRequest.method, url: transferRequest.url, via: "local transport", headers: transferRequest.headers)
            launchLocalHop(
                request, responder: responder, cache: hopCache, local: local, credential: credential,
                expectedToSend: transferRequest.bodyLength ?? -1)
        case .engine(let transferRequest, let hopCache):
            har?.sent(transferRequest)
            launchEngineHop(
                request, transferRequest, credential: credential, proxyCredential: proxyCredential, cache: hopCache,
                body: body)
        }
    }

    /// A local responder's reads of the body, as upload progress of the
    /// task's current hop.
    private var reportsLocalSends: @Sendable (Int64, Int64) -> Void {
        { [weak self] sent, expected in
            guard let self, let exchange = guarded.withLock({ $0.exchange }) else { return }
            exchange.reportSent(sent, expected: expected)
        }
    }

    /// Starts the engine transfer of a hop the router gave to libcurl.
    private func launchEngineHop(
        _ request: URLRequest, _ transferRequest: TransferRequest, credential: HopCredential?,
        proxyCredential: HopCredential?, cache hopCache: HopCache?, body: TransferRequest.Body
    ) {
        let expectedToSend = transferRequest.bodyLength ?? -1
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
