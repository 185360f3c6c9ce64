import Foundation
import LoopbackServer
import Synchronization
import Testing

@testable import AsyncURLSession

/// Cookies end to end against the loopback server. Each test uses a jar of
/// its own: the shared jar would carry one test's cookies into another's
/// requests (cookies do not tell ports apart).
@Suite struct CookieJarTests {
    private func configuration(_ jar: CookieJar = CookieJar()) -> SessionConfiguration {
        var configuration = testConfiguration()
        configuration.cookieJar = jar
        return configuration
    }

    private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    @Test func cookieSetByAResponse_isSentWithTheNextRequest() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            _ = try await session.data(from: server.url("/cookies/set?session=abc&theme=dark"))
            let (data, _) = try await session.data(from: server.url("/cookies/echo"))
            #expect(text(data) == "session=abc; theme=dark")
        }
    }

    @Test func ephemeralSessions_haveJarsOfTheirOwn_defaultOnesShareOne() async throws {
        #expect(SessionConfiguration.ephemeral.cookieJar !== SessionConfiguration.ephemeral.cookieJar)
        #expect(SessionConfiguration.default.cookieJar === CookieJar.shared)
        try await withServer { server in
            _ = try await Session(configuration: configuration()).data(from: server.url("/cookies/set?a=1"))
            let (data, _) = try await Session(configuration: configuration()).data(from: server.url("/cookies/echo"))
            #expect(text(data).isEmpty)
        }
    }

    @Test func cookieOfARedirect_isStored_andSentToTheNextHop() async throws {
        try await withServer { server in
            let jar = CookieJar()
            let url = server.url("/redirect-to?status=302&location=/cookies/echo&cookie=hop%3D1")
            let (data, _) = try await Session(configuration: configuration(jar)).data(from: url)
            #expect(text(data) == "hop=1")
            #expect(jar.cookies.map(\.name) == ["hop"])
        }
    }

    @Test func cookieOfOneHost_doesNotFollowARedirectToAnother() async throws {
        try await withServer { first in
            let second = try await LoopbackServer.start()
            defer { Task { try? await second.shutdown() } }
            // 127.0.0.1 and localhost are two hosts to a cookie jar.
            let target = "http://localhost:\(second.port)/cookies/echo"
                .addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let session = Session(configuration: configuration())
            _ = try await session.data(from: first.url("/cookies/set?only=first"))
            let (data, _) = try await session.data(from: first.url("/redirect-to?status=302&location=\(target)"))
            #expect(text(data).isEmpty)
        }
    }

    @Test func requestsOwnCookieHeader_isSentAsGiven() async throws {
        try await withServer { server in
            let session = Session(configuration: configuration())
            _ = try await session.data(from: server.url("/cookies/set?jar=1"))
            var request = URLRequest(url: server.url("/cookies/echo"))
            request.setValue("mine=2", forHTTPHeaderField: "Cookie")
            let (data, _) = try await session.data(for: request)
            #expect(text(data) == "mine=2")
        }
    }

    @Test func httpShouldSetCookiesOff_neitherStoresNorSends() async throws {
        try await withServer { server in
            let jar = CookieJar()
            jar.storeCookies(fromSetCookieFields: ["old=1"], for: server.url("/"))
            var configuration = configuration(jar)
            configuration.httpShouldSetCookies = false
            let session = Session(configuration: configuration)
            _ = try await session.data(from: server.url("/cookies/set?new=1"))
            let (data, _) = try await session.data(from: server.url("/cookies/echo"))
            #expect(text(data).isEmpty)
            #expect(jar.cookies.map(\.name) == ["old"])
        }
    }

    @Test func requestOptingOut_neitherStoresNorSends() async throws {
        try await withServer { server in
            let jar = CookieJar()
            let session = Session(configuration: configuration(jar))
            var request = URLRequest(url: server.url("/cookies/set?new=1"))
            request.httpShouldHandleCookies = false
            _ = try await session.data(for: request)
            #expect(jar.cookies.isEmpty)
        }
    }

    @Test func maxAgeZero_deletesTheCookie() async throws {
        try await withServer { server in
            let jar = CookieJar()
            let session = Session(configuration: configuration(jar))
            _ = try await session.data(from: server.url("/cookies/set?gone=1"))
            _ = try await session.data(from: server.url("/response-headers?Set-Cookie=gone%3D%3B%20Max-Age%3D0"))
            #expect(jar.cookies.isEmpty)
        }
    }

    @Test func responseThatSetsCookies_isReportedToTheJarsObserver() async throws {
        try await withServer { server in
            let jar = CookieJar()
            let seen = Mutex<[String]>([])
            jar.didStoreCookies = { cookies, url in
                seen.withLock { $0 += cookies.map { "\($0.name)@\(url.path)" } }
            }
            _ = try await Session(configuration: configuration(jar)).data(from: server.url("/cookies/set?a=1&b=2"))
            #expect(seen.withLock { $0 } == ["a@/cookies/set", "b@/cookies/set"])
        }
    }

    @Test func noJar_noCookies() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.cookieJar = nil
            let session = Session(configuration: configuration)
            _ = try await session.data(from: server.url("/cookies/set?a=1"))
            let (data, _) = try await session.data(from: server.url("/cookies/echo"))
            #expect(text(data).isEmpty)
        }
    }

    @Test func jarSetters_applyThePublicSuffixRule_asResponsesDo() {
        let jar = CookieJar()
        let wide = HTTPCookie(properties: [.name: "w", .value: "1", .domain: ".com", .path: "/"])!
        #expect(jar.setCookie(wide) == false)
        #expect(jar.setCookies([wide], for: URL(string: "https://www.example.com/")) == 0)
        #expect(jar.cookies(for: URL(string: "https://unrelated-shop.com/")!).isEmpty)
        let secure = HTTPCookie(properties: [.name: "s", .value: "1", .domain: "example.com", .path: "/", .secure: "TRUE"])!
        #expect(jar.setCookies([secure], for: URL(string: "http://example.com/")) == 0)
        #expect(jar.setCookies([secure], for: URL(string: "https://example.com/")) == 1)
    }
}
