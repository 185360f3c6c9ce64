internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The task's side of the session's response cache: what a hop takes from
/// it before it is sent (a stored answer, conditions to revalidate with),
/// what a response does to it (a 304 answers with the stored response, a
/// storable one is offered with a `willCacheResponse` decision, a success
/// to an unsafe method removes the URL's entry).
extension TaskCore {
    /// How a hop starts, as far as the cache is concerned.
    enum CacheLaunch {
        /// Send `request` (with conditions added when revalidating).
        case network(URLRequest, HopCache?)
        /// Answer from the cache; nothing is sent.
        case stored(CachedResponse, HopCache)
        case fail(URLError)
    }

    /// Sessions without a cache, and hops that cannot use one, get
    /// `.network(request, nil)` after a nil check. A GET whose URL has
    /// nothing stored (the common case) costs a lookup by URL and one
    /// header read; the request's other fields are only looked at when a
    /// response is stored or something stored could answer.
    func cacheLaunch(for request: URLRequest) -> CacheLaunch {
        guard let cache = context.configuration.responseCache, let url = request.url else { return .network(request, nil) }
        let additional = context.configuration.httpAdditionalHeaders
        let method = request.httpMethod ?? "GET"
        guard method == "GET" || method.uppercased() == "GET" else {
            let safe = ["HEAD", "OPTIONS", "TRACE"].contains(method.uppercased())
            return .network(request, safe ? nil : HopCache(cache: cache, request: request, mode: .invalidate))
        }
        let key = ResponseCache.key(for: url)
        guard kind == .data, key.hasPrefix("http:") || key.hasPrefix("https:") else { return .network(request, nil) }
        let policy = request.cachePolicy == .useProtocolCachePolicy
            ? context.configuration.requestCachePolicy : request.cachePolicy
        let now = Date()
        let found = policy == .reloadIgnoringLocalCacheData || policy == .reloadIgnoringLocalAndRemoteCacheData
            ? nil : cache.storedResponse(forKey: key)
        guard let found else {
            let onlyIfCached = policy == .returnCacheDataDontLoad
                || (request.value(forHTTPHeaderField: "Cache-Control")?.lowercased().contains("only-if-cached") ?? false)
            if onlyIfCached { return .fail(Self.nothingCached(url)) }
            return .network(request, HopCache(cache: cache, request: request, additionalHeaders: additional, mode: .load, now: now))
        }
        let seen = CacheRules.requestAsSent(request, additionalHeaders: additional)
        let stored = CacheRules.varyMatches(found, seen) ? found : nil
        func hopCache(_ mode: HopCache.Mode) -> HopCache {
            HopCache(cache: cache, request: request, additionalHeaders: additional, mode: mode, now: now)
        }
        switch CacheRules.plan(for: seen, policy: policy, stored: stored, now: now) {
        case .bypass:
            return .network(request, nil)
        case .load:
            return .network(request, hopCache(.load))
        case .serve(let stored):
            return .stored(stored, hopCache(.served))
        case .revalidate(let stored, let conditions):
            var conditional = request
            for (name, value) in conditions { conditional.setValue(value, forHTTPHeaderField: name) }
            return .network(conditional, hopCache(.revalidate(stored)))
        case .fail:
            return .fail(Self.nothingCached(url))
        }
    }

    private static func nothingCached(_ url: URL) -> URLError {
        URLError.make(
            .resourceUnavailable, url: url.absoluteString,
            reason: "No cached response for this request, and its cache policy does not allow loading it "
                + "(returnCacheDataDontLoad or only-if-cached).")
    }

    /// What the cache reads of a final head, outside the task's lock.
    struct CacheHeadInputs {
        let status: Int
        let version: String
        let length: Int64?
        /// nil when nothing in the head could make it storable.
        let fields: CachedHeaderFields?
        /// A 3xx or 401/407 may be held back (and its body with it), and a
        /// multipart stream is never one response: neither can be stored.
        let mayBeHeld: Bool

        init(_ head: borrowing ResponseHead) {
            status = head.statusCode
            version = head.httpVersion
            length = head.contentLength
            mayBeHeld = HopState.mayHold(status: status) || head.contentTypeIsMultipart
            // Copied only when the cache may need them: most responses say
            // nothing about caching, or say no-store (a few field lookups).
            fields = status == 304 || TaskCore.mayDescribeCaching(head)
                ? CachedHeaderFields(head.fields.lazy.map { ($0.name, $0.value) }) : nil
        }
    }

    /// Under the lock that checked the hop: the hop's `HopCache` takes the
    /// head. Nil when the hop has none.
    static func cacheReceivedHead(
        _ inputs: CacheHeadInputs, url: URL, in guarded: inout Guarded
    ) -> HopCache.HeadVerdict? {
        let authenticated = guarded.hop.credential != nil
        return guarded.hop.cache?.receivedHead(
            statusCode: inputs.status, httpVersion: inputs.version, fields: inputs.fields,
            contentLength: inputs.length, url: url, authenticated: authenticated,
            mayBeHeld: inputs.mayBeHeld)
    }

    /// Carries out the cache's verdict on a head, after the lock. Returns
    /// false when the head must not be delivered (a 304 that revalidated).
    func applyCacheVerdict(_ verdict: HopCache.HeadVerdict?) -> Bool {
        switch verdict {
        case .swallowNotModified?:
            return false
        case .invalidate(let url)?:
            context.configuration.responseCache?.removeCachedResponse(for: url)
            return true
        case .deliver?, nil:
            return true
        }
    }

    /// Whether a head has anything that could make it storable: a
    /// Cache-Control without no-store, or Expires, ETag or Last-Modified.
    static func mayDescribeCaching(_ head: borrowing ResponseHead) -> Bool {
        if let control = head.fields.value(named: "Cache-Control") {
            return !control.containsIgnoringASCIICase("no-store")
        }
        return head.fields.count(named: "ETag") > 0 || head.fields.count(named: "Last-Modified") > 0
            || head.fields.count(named: "Expires") > 0
    }

    /// At the good end of a hop with no decision to follow: a 304 that
    /// revalidated starts the hop that answers with the stored response; a
    /// captured response is offered for storing, then the task completes.
    /// Returns false when the cache has nothing to do (the caller completes).
    func finishWithCache() -> Bool {
        let taken = guarded.withLock { guarded -> (HopCache, CachedResponse?, CachedResponse?, URLRequest)? in
            guard guarded.hop.cache != nil else { return nil }
            let notModified = guarded.hop.cache?.takeNotModified()
            let url = guarded.hop.request.url
            let captured = notModified == nil ? url.flatMap { guarded.hop.cache?.takeCaptured(url: $0) } : nil
            guard let cache = guarded.hop.cache else { return nil }
            return (cache, notModified, captured, guarded.hop.request)
        }
        guard let (hopCache, notModified, captured, request) = taken else { return false }
        if let notModified {
            observation?.cacheHit()
            hopCache.cache.storeCachedResponse(notModified, for: hopCache.request)
            launchLocalHop(
                request, responder: StoredResponseResponder(stored: notModified),
                cache: hopCache.serving())
            return true
        }
        guard let captured else { return false }
        let decision = CacheDecision(proposedResponse: captured)
        decision.core.onSettle { [self] answer in
            if case .store(let response) = answer {
                hopCache.cache.storeCachedResponse(response, for: hopCache.request)
            }
            completeWithTransactions(error: nil)
        }
        offerDecision(.willCacheResponse(decision), decision.core) { handler, task in
            await handler.task(task, willCacheResponse: decision)
        }
        return true
    }
}
