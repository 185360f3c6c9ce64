import Foundation
import LoopbackServer
import Testing
import TestSupport
import URLSessionCompat

/// The classic cache API as legacy code uses it: the configuration's
/// `urlCache`, `URLCache` called directly, and `willCacheResponse` answered
/// in every style. /cache's body names a new representation each time the
/// server makes one, so equal bodies mean the cache answered.
@Suite struct CacheTests {
    private func configuration(_ cache: URLCache? = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0)) -> URLSessionConfiguration {
        let configuration = legacyConfiguration()
        configuration.urlCache = cache
        return configuration
    }

    private func fetch(_ url: URL, in configuration: URLSessionConfiguration) async throws -> String {
        let result = HandlerResult<Data>()
        URLSession(configuration: configuration).dataTask(with: url) { data, response, error in
            result.set(data, response, error)
        }.resume()
        let (data, _, error) = await result.value()
        if let error { throw error }
        return String(decoding: data ?? Data(), as: UTF8.self)
    }

    @Test func completionHandlerTask_secondRequestIsAnsweredByTheCache() async throws {
        try await withServer { server in
            let configuration = configuration()
            let url = server.url("/cache?cc=max-age=600")
            let first = try await fetch(url, in: configuration)
            let second = try await fetch(url, in: configuration)
            #expect(first == second)
        }
    }

    @Test func cacheableResponse_showsUpInTheConfiguredCache() async throws {
        try await withServer { server in
            let cache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0)
            let url = server.url("/cache?cc=max-age=600")
            let body = try await fetch(url, in: configuration(cache))
            let cached = cache.cachedResponse(for: URLRequest(url: url))
            #expect(cached.map { String(decoding: $0.data, as: UTF8.self) } == body)
            #expect((cached?.response as? HTTPURLResponse)?.statusCode == 200)
        }
    }

    @Test func responseStoredDirectly_isServedToASession() async throws {
        try await withServer { server in
            let cache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0)
            let url = server.url("/cache?cc=max-age=600")
            let response = HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=600"])!
            cache.storeCachedResponse(
                CachedURLResponse(response: response, data: Data("planted".utf8)), for: URLRequest(url: url))
            let body = try await fetch(url, in: configuration(cache))
            #expect(body == "planted")
        }
    }

    @Test func nilCache_disablesCaching() async throws {
        try await withServer { server in
            let configuration = configuration(nil)
            let url = server.url("/cache?cc=max-age=600")
            let first = try await fetch(url, in: configuration)
            let second = try await fetch(url, in: configuration)
            #expect(first != second)
        }
    }

    @Test(arguments: AnswerStyle.allCases)
    func willCacheResponse_isAskedAfterTheBody_beforeCompletion(style: AnswerStyle) async throws {
        try await withServer { server in
            let delegate = LegacyDelegate(style: style)
            let session = URLSession(configuration: configuration(), delegate: delegate, delegateQueue: nil)
            session.dataTask(with: server.url("/cache?cc=max-age=600")).resume()
            await delegate.completed.wait(for: 1)
            let calls = delegate.calls.filter { ["response", "data", "willCache", "complete"].contains($0) }
            #expect(calls == ["response", "data", "willCache", "complete"])
            session.finishTasksAndInvalidate()
        }
    }

    @Test(arguments: AnswerStyle.allCases)
    func willCacheResponse_answeredNil_storesNothing(style: AnswerStyle) async throws {
        try await withServer { server in
            let cache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0)
            let delegate = LegacyDelegate(style: style, storesResponses: false)
            let session = URLSession(configuration: configuration(cache), delegate: delegate, delegateQueue: nil)
            let url = server.url("/cache?cc=max-age=600")
            session.dataTask(with: url).resume()
            await delegate.completed.wait(for: 1)
            #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
            session.finishTasksAndInvalidate()
        }
    }

    @Test func willCacheResponse_isNotAskedForAResponseTheCacheServed() async throws {
        try await withServer { server in
            let configuration = configuration()
            let url = server.url("/cache?cc=max-age=600")
            _ = try await fetch(url, in: configuration)
            let delegate = LegacyDelegate()
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            session.dataTask(with: url).resume()
            await delegate.completed.wait(for: 1)
            #expect(!delegate.calls.contains("willCache"))
            #expect(delegate.calls.contains("data"))
            session.finishTasksAndInvalidate()
        }
    }

    @Test func metrics_sayTheCacheAnswered() async throws {
        try await withServer { server in
            let configuration = configuration()
            let url = server.url("/cache?cc=max-age=600")
            _ = try await fetch(url, in: configuration)
            let delegate = LegacyDelegate()
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            session.dataTask(with: url).resume()
            await delegate.completed.wait(for: 1)
            #expect(delegate.metrics?.transactionMetrics.map(\.resourceFetchType) == [.localCache])
            session.finishTasksAndInvalidate()
        }
    }

    @Test func defaultConfiguration_usesTheSharedCache_ephemeralOneItsOwn() {
        #expect(URLSessionConfiguration.default.urlCache === URLCache.shared)
        let ephemeral = URLSessionConfiguration.ephemeral.urlCache
        #expect(ephemeral != nil)
        #expect(ephemeral !== URLCache.shared)
    }

    @Test func resetEmptiesTheConfiguredCache() async throws {
        try await withServer { server in
            let cache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0)
            let session = URLSession(configuration: configuration(cache))
            let url = server.url("/cache?cc=max-age=600")
            _ = try await session.data(from: url)
            #expect(cache.cachedResponse(for: URLRequest(url: url)) != nil)
            let done = Signal()
            session.reset { done.fire() }
            await done.wait(for: 1)
            #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
        }
    }

    @Test func returnCacheDataDontLoad_withNothingCached_failsWithResourceUnavailable() async throws {
        try await withServer { server in
            var request = URLRequest(url: server.url("/cache?cc=max-age=600"))
            request.cachePolicy = .returnCacheDataDontLoad
            let result = HandlerResult<Data>()
            URLSession(configuration: configuration()).dataTask(with: request) { data, response, error in
                result.set(data, response, error)
            }.resume()
            let (_, _, error) = await result.value()
            #expect((error as? URLError)?.code == .resourceUnavailable)
        }
    }
}
