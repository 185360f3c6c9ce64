import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a hop does about the cache, decided before it is sent.
enum CachePlan: Sendable {
    /// Go to the network; the response may be stored.
    case load
    /// Go to the network, and neither read nor store: not a GET, a request
    /// that manages its own conditional or range headers, or `no-store`.
    case bypass
    /// Answer with the stored response; nothing is sent.
    case serve(CachedResponse)
    /// Ask the server whether the stored response is still good, with these
    /// conditional fields: a 304 serves it, anything else replaces it.
    case revalidate(CachedResponse, conditions: [(name: String, value: String)])
    /// `returnCacheDataDontLoad` (or `only-if-cached`) and nothing stored.
    case fail
}

/// RFC 9111's rules for a private cache, and URLRequest's cache policies:
/// what a request may take from the cache and what a response may leave in
/// it. Pure functions of their arguments.
enum CacheRules {
    /// Request fields that mean the caller runs its own conditional or
    /// partial request: the cache keeps out of it.
    private static let callerManaged = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Range"]

    /// `request` with the session's additional headers it did not set
    /// itself: what the server saw.
    static func requestAsSent(_ request: URLRequest, additionalHeaders: [String: String]) -> URLRequest {
        guard !additionalHeaders.isEmpty else { return request }
        var seen = request
        for (name, value) in additionalHeaders where request.value(forHTTPHeaderField: name) == nil {
            seen.setValue(value, forHTTPHeaderField: name)
        }
        return seen
    }

    /// Whether a request may use the cache at all (reading or storing).
    static func mayUseCache(_ request: URLRequest) -> Bool {
        guard (request.httpMethod ?? "GET").uppercased() == "GET" else { return false }
        for name in callerManaged where request.value(forHTTPHeaderField: name) != nil { return false }
        return !requestControl(request).noStore
    }

    static func requestControl(_ request: URLRequest) -> CacheControl {
        var control = CacheControl(fields: request.value(forHTTPHeaderField: "Cache-Control").map { [$0] } ?? [])
        // Pragma: no-cache counts only without a Cache-Control (RFC 9111 §5.4).
        if request.value(forHTTPHeaderField: "Cache-Control") == nil,
            request.value(forHTTPHeaderField: "Pragma")?.lowercased().contains("no-cache") == true
        {
            control.noCache = true
        }
        return control
    }

    /// - Parameter stored: the cache's response for this request's URL whose
    ///   Vary fields match it, if any.
    static func plan(
        for request: URLRequest, policy: URLRequest.CachePolicy, stored: CachedResponse?, now: Date
    ) -> CachePlan {
        guard mayUseCache(request) else { return .bypass }
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return .load
        case .returnCacheDataElseLoad:
            return stored.map { .serve($0) } ?? .load
        case .returnCacheDataDontLoad:
            return stored.map { .serve($0) } ?? .fail
        case .reloadRevalidatingCacheData:
            guard let stored else { return .load }
            return revalidation(of: stored) ?? .load
        case .useProtocolCachePolicy:
            return protocolPlan(for: request, stored: stored, now: now)
        @unknown default:
            return protocolPlan(for: request, stored: stored, now: now)
        }
    }

    private static func protocolPlan(for request: URLRequest, stored: CachedResponse?, now: Date) -> CachePlan {
        let asked = requestControl(request)
        guard let stored else { return asked.onlyIfCached ? .fail : .load }
        let freshness = CacheFreshness(stored, now: now)
        let control = CacheControl(fields: stored.fields.values(named: "Cache-Control"))
        var usable = !asked.noCache && !control.noCache
        if usable, let maxAge = asked.maxAge, freshness.age > TimeInterval(maxAge) { usable = false }
        if usable, let minFresh = asked.minFresh, freshness.lifetime - freshness.age < TimeInterval(minFresh) {
            usable = false
        }
        if usable, !freshness.isFresh {
            // A stale response is served only to a request that accepts
            // staleness, and never one that must be revalidated.
            let tolerated = asked.maxStale.map { freshness.staleness <= TimeInterval($0) } ?? false
            usable = tolerated && !control.mustRevalidate && !control.noCache
        }
        if usable || asked.onlyIfCached { return usable ? .serve(stored) : .fail }
        return revalidation(of: stored) ?? .load
    }

    /// The conditional request for a stored response with a validator.
    private static func revalidation(of stored: CachedResponse) -> CachePlan? {
        var conditions: [(name: String, value: String)] = []
        if let etag = stored.fields.value(named: "ETag") { conditions.append(("If-None-Match", etag)) }
        if let modified = stored.fields.value(named: "Last-Modified") { conditions.append(("If-Modified-Since", modified)) }
        return conditions.isEmpty ? nil : .revalidate(stored, conditions: conditions)
    }

    /// Whether a final response may be stored (RFC 9111 §3).
    /// - Parameter authenticated: the request carried credentials.
    static func mayStore(statusCode: Int, fields: CachedHeaderFields, request: URLRequest, authenticated: Bool) -> Bool {
        guard mayUseCache(request), statusCode >= 200, statusCode != 206, statusCode != 304 else { return false }
        let control = CacheControl(fields: fields.values(named: "Cache-Control"))
        guard !control.noStore else { return false }
        if fields.value(named: "Vary")?.contains("*") == true { return false }
        // §3.5: another user's credentials must not answer for this one,
        // unless the response says it may be shared.
        if authenticated || request.value(forHTTPHeaderField: "Authorization") != nil,
            !(control.isPublic || control.mustRevalidate || control.sharedMaxAge != nil)
        {
            return false
        }
        let explicit = control.maxAge != nil || fields.value(named: "Expires") != nil || control.isPublic
        return explicit || CacheFreshness.heuristicallyCacheable.contains(statusCode)
    }

    /// The request's values for the fields `fields`' Vary names (lowercased).
    static func varyValues(of fields: CachedHeaderFields, request: URLRequest) -> [String: String?] {
        var values: [String: String?] = [:]
        for field in fields.values(named: "Vary") {
            for name in field.split(separator: ",") {
                let name = name.trimmingCharacters(in: .whitespaces).lowercased()
                guard !name.isEmpty else { continue }
                values[name] = .some(request.value(forHTTPHeaderField: name))
            }
        }
        return values
    }

    /// Whether a stored response's Vary fields match `request` (§4.1).
    static func varyMatches(_ stored: CachedResponse, _ request: URLRequest) -> Bool {
        for (name, value) in stored.varyValues where request.value(forHTTPHeaderField: name) != value {
            return false
        }
        return true
    }
}

extension CacheRules {
    /// Whether a stored response could ever be reused: it has a freshness
    /// lifetime (explicit, or heuristic from Last-Modified) or a validator
    /// to revalidate it with. Others are not stored at all, so an API's
    /// uncacheable answers cost no copy and no disk write.
    static func isReusable(fields: CachedHeaderFields, statusCode: Int) -> Bool {
        let control = CacheControl(fields: fields.values(named: "Cache-Control"))
        if fields.value(named: "ETag") != nil || fields.value(named: "Last-Modified") != nil { return true }
        if let maxAge = control.maxAge { return maxAge > 0 }
        if let expires = fields.value(named: "Expires") {
            let date = fields.value(named: "Date").flatMap(CookieDate.parse) ?? Date()
            return CookieDate.parse(expires).map { $0 > date } ?? false
        }
        return false
    }
}
