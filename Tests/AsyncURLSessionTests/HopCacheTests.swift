import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@testable import AsyncURLSession

/// A hop's part of the response cache (the state of its `CacheStage`) on
/// its own, as a table: no engine, no network.
@Suite struct HopCacheTests {
    private let url = URL(string: "http://127.0.0.1/resource")!
    private let storable = CachedHeaderFields([(name: "Cache-Control", value: "max-age=600")])

    private func hop(_ mode: HopCache.Mode, capacity: Int = 1 << 20) -> HopCache {
        HopCache(cache: ResponseCache(memoryCapacity: capacity), request: URLRequest(url: url), mode: mode)
    }

    private func stored() -> CachedResponse {
        CachedResponse(
            url: url, statusCode: 200, httpVersion: "HTTP/1.1",
            fields: CachedHeaderFields([(name: "ETag", value: "\"v1\""), (name: "Cache-Control", value: "max-age=0")]),
            data: Data("stored".utf8), requestDate: Date(timeIntervalSinceNow: -60), responseDate: Date(timeIntervalSinceNow: -60))
    }

    private func head(
        _ cache: inout HopCache, status: Int, fields: CachedHeaderFields?, length: Int64? = nil, mayBeHeld: Bool = false
    ) -> String {
        switch cache.receivedHead(
            statusCode: status, httpVersion: "HTTP/1.1", fields: fields, contentLength: length, url: url,
            authenticated: false, mayBeHeld: mayBeHeld)
        {
        case .deliver: return "deliver"
        case .swallowNotModified: return "swallow"
        case .invalidate: return "invalidate"
        }
    }

    @Test func theHeadVerdict_perModeAndStatus() {
        // (mode, status, storable fields, may be held) -> verdict, whether the body is captured
        let rows: [(HopCache.Mode, Int, Bool, Bool, String, Bool)] = [
            (.load, 200, true, false, "deliver", true),
            (.load, 200, false, false, "deliver", false),
            (.load, 301, true, true, "deliver", false),
            (.invalidate, 204, false, false, "invalidate", false),
            (.invalidate, 500, false, false, "deliver", false),
            (.revalidate(stored()), 304, true, false, "swallow", false),
            (.revalidate(stored()), 200, true, false, "deliver", true),
        ]
        for (mode, status, isStorable, mayBeHeld, verdict, captures) in rows {
            var cache = hop(mode)
            let said = head(&cache, status: status, fields: isStorable ? storable : nil, mayBeHeld: mayBeHeld)
            #expect(said == verdict, "\(mode) \(status)")
            #expect((cache.capture != nil) == captures, "\(mode) \(status)")
            #expect(cache.hasWorkAtEnd == (captures || verdict == "swallow"), "\(mode) \(status)")
        }
    }

    @Test func a304_answersWithTheStoredResponse_once() {
        var cache = hop(.revalidate(stored()))
        _ = head(&cache, status: 304, fields: storable)
        let answer = cache.takeNotModified()
        #expect(answer?.data == Data("stored".utf8))
        #expect(cache.takeNotModified() == nil)
    }

    @Test func aCapturedBody_isStoredWithItsDecodedLength() {
        var cache = hop(.load)
        _ = head(&cache, status: 200, fields: storable)
        Data("hello ".utf8).withUnsafeBytes { cache.receivedBody($0) }
        Data("world".utf8).withUnsafeBytes { cache.receivedBody($0) }
        let captured = cache.takeCaptured(url: url)
        #expect(captured?.data == Data("hello world".utf8))
        #expect(captured?.fields.value(named: "Content-Length") == "11")
        #expect(cache.takeCaptured(url: url) == nil)
    }

    @Test func aBodyPastTheEntryLimit_isDeliveredButNotStored() {
        // A 400-byte cache keeps entries of at most 20 bytes.
        var cache = hop(.load, capacity: 400)
        _ = head(&cache, status: 200, fields: storable)
        Data(count: 15).withUnsafeBytes { cache.receivedBody($0) }
        #expect(cache.capture != nil)
        Data(count: 15).withUnsafeBytes { cache.receivedBody($0) }
        #expect(cache.capture == nil)
        #expect(!cache.hasWorkAtEnd)
    }

    @Test func aDeclaredLengthPastTheLimit_isNotCaptured() {
        var cache = hop(.load, capacity: 400)
        _ = head(&cache, status: 200, fields: storable, length: 21)
        #expect(cache.capture == nil)
    }
}
