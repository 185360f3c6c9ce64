import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Synchronization
import Testing
import TestSupport

@testable import AsyncURLSession

/// The response cache end to end against the loopback server's /cache
/// route, whose body names a new representation each time the server makes
/// one: the same body twice means the second came from the cache. Each
/// test uses a cache of its own.
@Suite struct ResponseCacheTests {
    private func configuration(_ cache: ResponseCache = ResponseCache(memoryCapacity: 4 << 20)) -> SessionConfiguration {
        var configuration = testConfiguration()
        configuration.responseCache = cache
        return configuration
    }

    private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    private func cacheURL(_ server: LoopbackServer, _ query: String) -> URL {
        server.url("/cache?\(query)")
    }

    private func get(_ session: Session, _ url: URL, policy: URLRequest.CachePolicy = .useProtocolCachePolicy, headers: [String: String] = [:]) async throws -> (String, HTTPURLResponse) {
        var request = URLRequest(url: url, cachePolicy: policy)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        return (text(data), response as! HTTPURLResponse)
    }

    private static let pastDate = "Wed, 21 Oct 2015 07:28:00 GMT"

    // MARK: - Freshness

    @Test func freshResponse_isServedFromTheCache_withoutTheNetwork() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=max-age=600")
            let (first, _) = try await get(session, url)
            let (second, response) = try await get(session, url)
            #expect(second == first)
            #expect(response.statusCode == 200)
            #expect(response.value(forHTTPHeaderField: "Cache-Control") == "max-age=600")
        }
    }

    @Test func responseFromTheCache_saysSoInItsMetrics() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=max-age=600")
            let first = await record(session.dataTask(with: url).resumed())
            #expect(first.metrics?.transactionMetrics.last?.fetchType == .networkLoad)
            #expect(first.kinds == ["response", "data", "willCacheResponse", "metrics"])
            let second = await record(session.dataTask(with: url).resumed())
            #expect(second.metrics?.transactionMetrics.map(\.fetchType) == [.localCache])
            #expect(second.kinds == ["response", "data", "metrics"])
            #expect(second.body == first.body)
        }
    }

    @Test func noStore_isNeverStored() async throws {
        try await withServer { server in
            let cache = ResponseCache(memoryCapacity: 4 << 20)
            let session = Session(configuration: configuration(cache))
            let url = cacheURL(server, "cc=no-store,max-age=600")
            let (first, _) = try await get(session, url)
            let (second, _) = try await get(session, url)
            #expect(first != second)
            #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
        }
    }

    @Test func responseWithoutFreshnessOrValidator_isNotStored() async throws {
        try await withServer { server in
            let cache = ResponseCache(memoryCapacity: 4 << 20)
            let session = Session(configuration: configuration(cache))
            let url = cacheURL(server, "x=1")
            _ = try await get(session, url)
            #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
            #expect(cache.currentMemoryUsage == 0)
        }
    }

    @Test func expiresInThePast_isStale_andLoadedAgain() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "expires=\(Self.pastDate.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&cc=public")
            let (first, _) = try await get(session, url)
            let (second, _) = try await get(session, url)
            #expect(first != second)
        }
    }

    @Test func ageAboveMaxAge_isStale() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=max-age=60&age=120")
            let (first, _) = try await get(session, url)
            let (second, _) = try await get(session, url)
            #expect(first != second)
        }
    }

    @Test func lastModifiedLongAgo_givesAHeuristicFreshness() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let modified = Self.pastDate.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let url = cacheURL(server, "last-modified=\(modified)")
            let (first, _) = try await get(session, url)
            let (second, _) = try await get(session, url)
            #expect(second == first)
        }
    }

    // MARK: - Revalidation

    @Test func noCache_revalidatesWithTheETag_andA304ServesTheStoredBody() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=no-cache&etag=%22v1%22")
            let (first, firstResponse) = try await get(session, url)
            let (second, response) = try await get(session, url)
            #expect(second == first)
            #expect(response.statusCode == 200)
            // The 304's fields replace the stored ones: a new representation
            // number in the header, the stored body.
            #expect(response.value(forHTTPHeaderField: "X-Representation") != firstResponse.value(forHTTPHeaderField: "X-Representation"))
            #expect(response.value(forHTTPHeaderField: "ETag") == "\"v1\"")
        }
    }

    @Test func revalidatedTask_reportsTheNetworkExchange_thenTheCachedAnswer() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=no-cache&etag=%22v1%22")
            _ = try await get(session, url)
            let second = await record(session.dataTask(with: url).resumed())
            #expect(second.response?.statusCode == 200)
            #expect(second.metrics?.transactionMetrics.map(\.fetchType) == [.networkLoad, .localCache])
            #expect(second.kinds == ["response", "data", "metrics"])
        }
    }

    @Test func staleResponse_revalidatesWithLastModified() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let modified = Self.pastDate.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let url = cacheURL(server, "cc=max-age=0&last-modified=\(modified)")
            let (first, _) = try await get(session, url)
            let (second, response) = try await get(session, url)
            #expect(second == first)
            #expect(response.statusCode == 200)
        }
    }

    @Test func mustRevalidate_isNotServedStale_evenToMaxStale() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=max-age=0,must-revalidate")
            let (first, _) = try await get(session, url)
            let (second, _) = try await get(session, url, headers: ["Cache-Control": "max-stale=3600"])
            #expect(first != second)
        }
    }

    @Test func maxStaleRequest_acceptsAStaleResponse() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            // Stored (fresh for a second when made) but stale on arrival.
            let url = cacheURL(server, "cc=max-age=1&age=5")
            let (first, _) = try await get(session, url)
            let (second, _) = try await get(session, url, headers: ["Cache-Control": "max-stale=3600"])
            #expect(first == second)
        }
    }

    // MARK: - Vary, authentication, unsafe methods

    @Test func vary_servesOnlyRequestsWithTheSameFieldValues() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=max-age=600&vary=X-Variant")
            let (a1, _) = try await get(session, url, headers: ["X-Variant": "a"])
            let (a2, _) = try await get(session, url, headers: ["X-Variant": "a"])
            let (b, _) = try await get(session, url, headers: ["X-Variant": "b"])
            #expect(a1 == a2)
            #expect(b != a1)
        }
    }

    @Test func varyStar_isNeverStored() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=max-age=600&vary=*")
            let (first, _) = try await get(session, url)
            let (second, _) = try await get(session, url)
            #expect(first != second)
        }
    }

    @Test func authenticatedRequest_isNotStored_unlessPublic() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let privateURL = cacheURL(server, "cc=max-age=600")
            let publicURL = cacheURL(server, "cc=max-age=600,public")
            let auth = ["Authorization": "Bearer secret"]
            let (p1, _) = try await get(session, privateURL, headers: auth)
            let (p2, _) = try await get(session, privateURL, headers: auth)
            #expect(p1 != p2)
            let (q1, _) = try await get(session, publicURL, headers: auth)
            let (q2, _) = try await get(session, publicURL, headers: auth)
            #expect(q1 == q2)
        }
    }

    @Test func unsafeMethod_removesTheStoredResponse() async throws {
        try await withServer { server in
            let cache = ResponseCache(memoryCapacity: 4 << 20)
            let session = Session(configuration: configuration(cache))
            let url = cacheURL(server, "cc=max-age=600")
            let (first, _) = try await get(session, url)
            var post = URLRequest(url: url)
            post.httpMethod = "POST"
            post.httpBody = Data("x".utf8)
            _ = try await session.data(for: post)
            #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
            let (second, _) = try await get(session, url)
            #expect(first != second)
        }
    }

    // MARK: - Request cache policies

    @Test func reloadIgnoringLocalCacheData_goesToTheNetwork_andStoresTheNewResponse() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=max-age=600")
            let (first, _) = try await get(session, url)
            let (second, _) = try await get(session, url, policy: .reloadIgnoringLocalCacheData)
            let (third, _) = try await get(session, url)
            #expect(second != first)
            #expect(third == second)
        }
    }

    @Test func returnCacheDataElseLoad_servesAStaleResponse() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=max-age=0&etag=%22s%22")
            let (first, _) = try await get(session, url)
            let (second, _) = try await get(session, url, policy: .returnCacheDataElseLoad)
            #expect(second == first)
        }
    }

    @Test func returnCacheDataDontLoad_onAMiss_failsWithResourceUnavailable() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=max-age=600")
            await #expect(throws: URLError.self) {
                _ = try await get(session, url, policy: .returnCacheDataDontLoad)
            }
            do {
                _ = try await get(session, url, policy: .returnCacheDataDontLoad)
            } catch {
                #expect(error.urlErrorCode == .resourceUnavailable)
            }
        }
    }

    @Test func returnCacheDataDontLoad_onAHit_servesIt() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=max-age=0&etag=%22s%22")
            let (first, _) = try await get(session, url)
            let (second, _) = try await get(session, url, policy: .returnCacheDataDontLoad)
            #expect(second == first)
        }
    }

    @Test func reloadRevalidatingCacheData_revalidatesAFreshResponse() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=max-age=600&etag=%22r%22")
            let (first, firstResponse) = try await get(session, url)
            let (second, response) = try await get(session, url, policy: .reloadRevalidatingCacheData)
            #expect(second == first)
            #expect(response.value(forHTTPHeaderField: "X-Representation") != firstResponse.value(forHTTPHeaderField: "X-Representation"))
        }
    }

    @Test func configurationPolicy_appliesToRequestsWithTheDefaultPolicy() async throws {
        try await withServer { server in
            var configuration = configuration()
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            let session = Session(configuration: configuration)
            let url = cacheURL(server, "cc=max-age=600")
            let (first, _) = try await get(session, url)
            let (second, _) = try await get(session, url)
            #expect(first != second)
        }
    }

    @Test func requestsOwnConditionalHeaders_bypassTheCache() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            let url = cacheURL(server, "cc=max-age=600&etag=%22c%22")
            _ = try await get(session, url)
            var request = URLRequest(url: url)
            request.setValue("\"c\"", forHTTPHeaderField: "If-None-Match")
            let (_, response) = try await session.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 304)
        }
    }

    // MARK: - The willCacheResponse decision

    @Test func willCacheResponse_doNotStore_keepsItOut() async throws {
        try await withServer { server in
            let cache = ResponseCache(memoryCapacity: 4 << 20)
            let session = Session(configuration: configuration(cache))
            let url = cacheURL(server, "cc=max-age=600")
            let task = session.dataTask(with: url)
            task.resume()
            for try await event in task.events {
                if case .willCacheResponse(let decision) = event { decision.doNotStore() }
            }
            #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
        }
    }

    @Test func willCacheResponse_storesAChangedResponse() async throws {
        try await withServer { server in
            let cache = ResponseCache(memoryCapacity: 4 << 20)
            let session = Session(configuration: configuration(cache))
            let url = cacheURL(server, "cc=max-age=600")
            let task = session.dataTask(with: url)
            task.resume()
            for try await event in task.events {
                if case .willCacheResponse(let decision) = event {
                    var changed = decision.proposedResponse
                    changed.data = Data("changed".utf8)
                    decision.store(changed)
                }
            }
            let (second, _) = try await get(session, url)
            #expect(second == "changed")
        }
    }

    @Test func taskDelegate_isAskedWillCacheResponse() async throws {
        final class Refuser: SessionTaskDelegate {
            let asked = Atomic<Int>(0)
            func task(_ task: SessionTask, willCacheResponse decision: CacheDecision) async {
                asked.add(1, ordering: .relaxed)
                decision.doNotStore()
            }
        }
        try await withServer { server in
            let cache = ResponseCache(memoryCapacity: 4 << 20)
            let session = Session(configuration: configuration(cache))
            let url = cacheURL(server, "cc=max-age=600")
            let refuser = Refuser()
            _ = try await session.data(for: URLRequest(url: url), delegate: refuser)
            #expect(refuser.asked.load(ordering: .relaxed) == 1)
            #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
        }
    }

    // MARK: - Sessions and their caches

    @Test func defaultSessions_shareTheSharedCache_ephemeralOnesHaveTheirOwnInMemory() {
        #expect(SessionConfiguration.default.responseCache === ResponseCache.shared)
        let ephemeral = SessionConfiguration.ephemeral.responseCache
        #expect(ephemeral != nil)
        #expect(ephemeral !== ResponseCache.shared)
        #expect(ephemeral !== SessionConfiguration.ephemeral.responseCache)
        #expect(ephemeral?.diskCapacity == 0)
    }

    @Test func noCache_configuration_neverStores() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.responseCache = nil
            let session = Session(configuration: configuration)
            let url = cacheURL(server, "cc=max-age=600")
            let (first, _) = try await get(session, url)
            let (second, _) = try await get(session, url)
            #expect(first != second)
        }
    }

    @Test func reset_emptiesTheCache() async throws {
        try await withServer { server in
            let cache = ResponseCache(memoryCapacity: 4 << 20)
            let session = Session(configuration: configuration(cache))
            let url = cacheURL(server, "cc=max-age=600")
            _ = try await get(session, url)
            await session.reset()
            #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
        }
    }

    // MARK: - Delivery of a cached body

    @Test func largeCachedBody_reachesASlowConsumerWhole() async throws {
        try await withServer { server in
            let cache = ResponseCache(memoryCapacity: 64 << 20)
            var configuration = configuration(cache)
            configuration.streamBufferHighWatermark = 64 << 10
            configuration.streamBufferLowWatermark = 16 << 10
            let session = Session(configuration: configuration)
            let url = server.url("/cache?cc=max-age=600")
            // A big stored body, put there directly.
            let body = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let response = HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["Cache-Control": "max-age=600", "Content-Length": "\(body.count)"])!
            cache.storeCachedResponse(CachedResponse(response: response, data: body), for: URLRequest(url: url))
            let task = session.dataTask(with: url)
            task.resume()
            var received = Data()
            for try await event in task.events {
                if case .data(let chunk) = event {
                    received.append(chunk)
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            #expect(received == body)
        }
    }

    /// A slow events consumer: its buffer fills, receiving pauses, and
    /// libcurl hands the bytes it was refused again on resuming. The stored
    /// copy must hold them once, as the consumer got them.
    @Test func aSlowConsumer_getsTheBodyStoredAsItReceivedIt() async throws {
        try await withServer { server in
            // Large enough to store a 512 KiB entry (at most 5% of the capacity).
            var configuration = configuration(ResponseCache(memoryCapacity: 64 << 20))
            configuration.streamBufferHighWatermark = 16 << 10
            configuration.streamBufferLowWatermark = 4 << 10
            let session = Session(configuration: configuration)
            let url = cacheURL(server, "cc=max-age=600&size=\(512 << 10)")
            let task = session.dataTask(with: url)
            task.resume()
            // Slower than the loopback: the buffer fills between pulls.
            let received = try await consumeSlowly(task)
            #expect(received.count == 512 << 10)
            let (stored, response) = try await session.data(for: URLRequest(url: url))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(stored.count == received.count, "the cached body has the length the consumer got")
            #expect(stored == received, "the cached body is the body the consumer got")
        }
    }

    @Test func cancellingATaskServedFromTheCache_failsItWithCancelled() async throws {
        try await withServer { server in
            let cache = ResponseCache(memoryCapacity: 64 << 20)
            let session = Session(configuration: configuration(cache))
            let url = server.url("/cache?cc=max-age=600")
            let body = Data(count: 4 << 20)
            let response = HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=600"])!
            cache.storeCachedResponse(CachedResponse(response: response, data: body), for: URLRequest(url: url))
            let task = session.dataTask(with: url)
            task.resume()
            var failure: (any Error)?
            do {
                for try await event in task.events {
                    if case .data = event { task.cancel() }
                }
            } catch {
                failure = error
            }
            #expect(failure?.urlErrorCode == .cancelled)
        }
    }
}

extension SessionTask {
    fileprivate func resumed() -> SessionTask {
        resume()
        return self
    }
}
