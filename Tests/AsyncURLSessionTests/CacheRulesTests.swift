import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@testable import AsyncURLSession

/// RFC 9111's arithmetic and directive parsing, as pure functions.
@Suite struct CacheRulesTests {
    private func stored(_ fields: [(String, String)], status: Int = 200, receivedAgo: TimeInterval = 0, now: Date) -> CachedResponse {
        CachedResponse(
            url: URL(string: "http://example.test/")!, statusCode: status, httpVersion: "HTTP/1.1",
            fields: CachedHeaderFields(fields.map { (name: $0.0, value: $0.1) }), data: Data(),
            requestDate: now.addingTimeInterval(-receivedAgo), responseDate: now.addingTimeInterval(-receivedAgo))
    }

    @Test func cacheControl_parsesDirectives_caseAndSpacesIgnored() {
        let control = CacheControl(fields: ["Max-Age=60 , no-cache, PRIVATE", "must-revalidate"])
        #expect(control.maxAge == 60)
        #expect(control.noCache)
        #expect(control.isPrivate)
        #expect(control.mustRevalidate)
        #expect(!control.noStore)
    }

    @Test func cacheControl_firstOfARepeatedDirectiveCounts() {
        #expect(CacheControl(fields: ["max-age=10", "max-age=99"]).maxAge == 10)
    }

    @Test func cacheControl_invalidMaxAge_meansStale() {
        #expect(CacheControl(fields: ["max-age=soon"]).maxAge == 0)
        #expect(CacheControl(fields: ["max-age=-5"]).maxAge == 0)
    }

    @Test func cacheControl_commaInsideAQuotedValue_doesNotSplit() {
        let control = CacheControl(fields: ["no-cache=\"Set-Cookie, X-A\", max-age=5"])
        #expect(control.noCache)
        #expect(control.maxAge == 5)
    }

    @Test func cacheControl_quotedValue_isUnquoted_andTabsAndEscapesHandled() {
        let control = CacheControl(fields: ["\tS-MAXAGE = \"120\"\t,\tno-cache=\"a\\\",b\", max-age=7,,  ,"])
        #expect(control.sharedMaxAge == 120)
        #expect(control.noCache)
        // The escaped quote kept the comma inside the value: max-age is its own directive.
        #expect(control.maxAge == 7)
    }

    @Test func cacheControl_nonASCIIBytes_doNotConfuseTheSplit() {
        let control = CacheControl(fields: ["x-note=\"caf\u{e9}, d\u{e9}j\u{e0}\", NO-STORE"])
        #expect(control.noStore)
        #expect(control.maxAge == nil)
    }

    @Test func cacheControl_maxStaleWithoutValue_acceptsAnyStaleness() {
        #expect(CacheControl(fields: ["max-stale"]).maxStale == Int.max)
    }

    @Test func freshness_maxAgeWinsOverExpires() {
        let now = Date()
        let response = stored([("Cache-Control", "max-age=100"), ("Expires", "Thu, 01 Jan 1970 00:00:00 GMT")], now: now)
        let freshness = CacheFreshness(response, now: now)
        #expect(freshness.lifetime == 100)
        #expect(freshness.isFresh)
    }

    @Test func freshness_ageGrowsWithTimeInTheCache_andTheAgeField() {
        let now = Date()
        let response = stored([("Cache-Control", "max-age=100"), ("Age", "30")], receivedAgo: 50, now: now)
        let freshness = CacheFreshness(response, now: now)
        #expect(abs(freshness.age - 80) < 1)
        #expect(freshness.isFresh)
    }

    @Test func freshness_heuristic_isATenthOfTheTimeSinceLastModified_atMostADay() {
        let now = Date()
        let date = DateFormatter.httpDate(now)
        let tenHoursAgo = DateFormatter.httpDate(now.addingTimeInterval(-36_000))
        let longAgo = DateFormatter.httpDate(now.addingTimeInterval(-365 * 86_400))
        let recent = CacheFreshness(stored([("Date", date), ("Last-Modified", tenHoursAgo)], now: now), now: now)
        #expect(abs(recent.lifetime - 3_600) < 2)
        let old = CacheFreshness(stored([("Date", date), ("Last-Modified", longAgo)], now: now), now: now)
        #expect(old.lifetime == CacheFreshness.maximumHeuristicLifetime)
    }

    @Test func freshness_heuristic_onlyForHeuristicallyCacheableStatuses() {
        let now = Date()
        let response = stored([("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")], status: 302, now: now)
        #expect(CacheFreshness(response, now: now).lifetime == 0)
    }

    @Test func invalidExpires_isAlreadyExpired() {
        let now = Date()
        #expect(CacheFreshness(stored([("Expires", "0")], now: now), now: now).lifetime == 0)
    }

    @Test func notModified_replacesStoredFields_butNotThoseOfTheBody() {
        let now = Date()
        var original = stored([("ETag", "\"1\""), ("Content-Length", "5"), ("X-A", "old")], now: now)
        original.data = Data("hello".utf8)
        let updated = original.updated(
            byNotModified: CachedHeaderFields([(name: "X-A", value: "new"), (name: "Content-Length", value: "0")]), requestDate: now, responseDate: now)
        #expect(updated.fields.value(named: "x-a") == "new")
        #expect(updated.fields.value(named: "content-length") == "5")
        #expect(updated.fields.value(named: "etag") == "\"1\"")
        #expect(updated.data == original.data)
    }

    @Test func mayStore_refusesPartialAndNotModifiedAndNoStore() {
        let request = URLRequest(url: URL(string: "http://example.test/")!)
        let fresh = CachedHeaderFields([(name: "Cache-Control", value: "max-age=60")])
        #expect(CacheRules.mayStore(statusCode: 200, fields: fresh, request: request, authenticated: false))
        #expect(!CacheRules.mayStore(statusCode: 206, fields: fresh, request: request, authenticated: false))
        #expect(!CacheRules.mayStore(statusCode: 304, fields: fresh, request: request, authenticated: false))
        let noStore = CachedHeaderFields([(name: "Cache-Control", value: "max-age=60, no-store")])
        #expect(!CacheRules.mayStore(statusCode: 200, fields: noStore, request: request, authenticated: false))
    }

    @Test func mayStore_authenticated_onlyWhenTheResponseAllowsSharing() {
        let request = URLRequest(url: URL(string: "http://example.test/")!)
        #expect(!CacheRules.mayStore(
            statusCode: 200, fields: CachedHeaderFields([(name: "Cache-Control", value: "max-age=60")]), request: request, authenticated: true))
        #expect(CacheRules.mayStore(
            statusCode: 200, fields: CachedHeaderFields([(name: "Cache-Control", value: "max-age=60, must-revalidate")]),
            request: request, authenticated: true))
    }

    @Test func plan_pragmaNoCache_revalidates() {
        let now = Date()
        var request = URLRequest(url: URL(string: "http://example.test/")!)
        request.setValue("no-cache", forHTTPHeaderField: "Pragma")
        let response = stored([("Cache-Control", "max-age=600"), ("ETag", "\"e\"")], now: now)
        guard case .revalidate(_, let conditions) = CacheRules.plan(
            for: request, policy: .useProtocolCachePolicy, stored: response, now: now)
        else {
            Issue.record("expected a revalidation")
            return
        }
        #expect(conditions.map(\.name) == ["If-None-Match"])
    }
}

extension DateFormatter {
    fileprivate static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
