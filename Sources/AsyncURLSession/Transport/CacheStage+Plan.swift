internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The stage in front of the transport: how a hop starts, as far as the
/// response cache is concerned (RFC 9111 with URLRequest's cache policies).
extension CacheStage {
    enum Plan {
        /// Send `request` (with conditions added when revalidating); the
        /// `HopCache` is the hop's part of the cache, nil when it has none.
        case network(URLRequest, HopCache?)
        /// Answer from the cache; nothing is sent.
        case stored(CachedResponse)
        case fail(URLError)
    }

    /// Sessions without a cache, and hops that cannot use one, get
    /// `.network(request, nil)` after a nil check. A GET whose URL has
    /// nothing stored (the common case) costs a lookup by URL and one
    /// header read; the request's other fields are only looked at when a
    /// response is stored or something stored could answer. `kind` is
    /// read only then (it takes the task's lock).
    static func plan(
        for request: URLRequest, kind: @autoclosure () -> TaskKind, configuration: SessionConfiguration
    ) -> Plan {
        guard let cache = configuration.responseCache, let url = request.url else { return .network(request, nil) }
        let additional = configuration.httpAdditionalHeaders
        let method = request.httpMethod ?? "GET"
        guard method == "GET" || method.uppercased() == "GET" else {
            let safe = ["HEAD", "OPTIONS", "TRACE"].contains(method.uppercased())
            return .network(request, safe ? nil : HopCache(cache: cache, request: request, mode: .invalidate))
        }
        let key = ResponseCache.key(for: url)
        guard key.hasPrefix("http:") || key.hasPrefix("https:"), kind() == .data else { return .network(request, nil) }
        let policy = request.cachePolicy == .useProtocolCachePolicy ? configuration.requestCachePolicy : request.cachePolicy
        let now = Date()
        let found = policy == .reloadIgnoringLocalCacheData || policy == .reloadIgnoringLocalAndRemoteCacheData
            ? nil : cache.storedResponse(forKey: key)
        guard let found else {
            let onlyIfCached = policy == .returnCacheDataDontLoad
                || (request.value(forHTTPHeaderField: "Cache-Control")?.lowercased().contains("only-if-cached") ?? false)
            if onlyIfCached { return .fail(nothingCached(url)) }
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
            return .stored(stored)
        case .revalidate(let stored, let conditions):
            var conditional = request
            for (name, value) in conditions { conditional.setValue(value, forHTTPHeaderField: name) }
            return .network(conditional, hopCache(.revalidate(stored)))
        case .fail:
            return .fail(nothingCached(url))
        }
    }

    private static func nothingCached(_ url: URL) -> URLError {
        URLError.make(
            .resourceUnavailable, url: url.absoluteString,
            reason: "No cached response for this request, and its cache policy does not allow loading it "
                + "(returnCacheDataDontLoad or only-if-cached).")
    }
}

/// What the cache reads of a final head.
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
        fields = status == 304 || Self.mayDescribeCaching(head)
            ? CachedHeaderFields(head.fields.lazy.map { ($0.name, $0.value) }) : nil
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
}
