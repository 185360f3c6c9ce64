import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Synchronization
import Testing

/// `SessionConfiguration.proxy`: requests through a real loopback proxy
/// (HTTP forwarding, CONNECT tunnels, SOCKS5), its 407 as a challenge, and
/// whose credentials go where.
@Suite struct ProxyTests {
    private func configuration(
        _ proxy: ProxyConfiguration, trusting server: LoopbackServer? = nil
    ) -> SessionConfiguration {
        var configuration = testConfiguration(trusting: server)
        configuration.proxy = proxy
        return configuration
    }

    /// The header fields the origin's /echo saw.
    private func echoedHeaders(_ data: Data) throws -> [String: String] {
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let pairs = object?["headers"] as? [[String]] ?? []
        return Dictionary(pairs.map { ($0[0].lowercased(), $0[1]) }, uniquingKeysWith: { first, _ in first })
    }

    /// Answers every proxy challenge with `credential`, recording the spaces.
    final class ProxyAnswers: SessionTaskDelegate {
        let credential: URLCredential?
        let spaces = Mutex<[URLProtectionSpace]>([])
        init(_ credential: URLCredential?) { self.credential = credential }

        func task(_ task: SessionTask, didReceive challenge: ChallengeDecision) async {
            spaces.withLock { $0.append(challenge.protectionSpace) }
            if let credential { challenge.useCredential(credential) } else { challenge.performDefaultHandling() }
        }
    }

    @Test func httpRequest_isForwardedByTheProxy() async throws {
        try await withProxy { server, proxy in
            let session = Session(configuration: configuration(.http(host: "127.0.0.1", port: proxy.port)))
            let (data, response) = try await session.data(from: server.url("/bytes/5"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data.count == 5)
            let record = try #require(proxy.records.first)
            #expect(record.method == "GET")
            #expect(record.target == server.url("/bytes/5").absoluteString)
        }
    }

    @Test func httpsRequest_tunnelsThroughCONNECT_andKeepsItsHeadersInside() async throws {
        try await withProxy(LoopbackServer.Options(tls: true)) { server, proxy in
            let session = Session(
                configuration: configuration(.http(host: "127.0.0.1", port: proxy.port), trusting: server))
            var request = URLRequest(url: server.url("/echo"))
            request.setValue("Bearer origin-secret", forHTTPHeaderField: "Authorization")
            let (data, _) = try await session.data(for: request)
            #expect(try echoedHeaders(data)["authorization"] == "Bearer origin-secret")
            let record = try #require(proxy.records.first)
            #expect(record.method == "CONNECT")
            #expect(record.target == "127.0.0.1:\(server.port)")
            #expect(record.value(of: "Authorization") == nil)
        }
    }

    @Test func socks5_carriesHTTPAndHTTPS() async throws {
        try await withProxy(LoopbackServer.Options(tls: true)) { server, proxy in
            let session = Session(
                configuration: configuration(.socks(host: "127.0.0.1", port: proxy.port), trusting: server))
            let (data, _) = try await session.data(from: server.url("/bytes/7"))
            #expect(data.count == 7)
            #expect(proxy.records.first?.method == "SOCKS5")
            #expect(proxy.records.first?.target == "127.0.0.1:\(server.port)")
        }
    }

    @Test func exceptions_areReachedDirectly() async throws {
        try await withProxy { server, proxy in
            let session = Session(
                configuration: configuration(.http(host: "127.0.0.1", port: proxy.port, exceptions: ["127.0.0.1"])))
            let (data, _) = try await session.data(from: server.url("/bytes/3"))
            #expect(data.count == 3)
            #expect(proxy.records.isEmpty)
        }
    }

    @Test func forwarded407_isAProxyChallenge_andTheAnswerGoesToTheProxyOnly() async throws {
        try await withProxy(requiring: ("proxy-user", "proxy-pass")) { server, proxy in
            let answers = ProxyAnswers(URLCredential(user: "proxy-user", password: "proxy-pass", persistence: .forSession))
            let session = Session(configuration: configuration(.http(host: "127.0.0.1", port: proxy.port)))
            let (data, response) = try await session.data(from: server.url("/echo"), delegate: answers)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            let space = try #require(answers.spaces.withLock { $0.first })
            #expect(space.isProxy())
            #expect(space.proxyType == NSURLProtectionSpaceHTTPProxy)
            #expect(space.host == "127.0.0.1" && space.port == proxy.port)
            #expect(space.realm == "loopback-proxy")
            #expect(space.authenticationMethod == NSURLAuthenticationMethodHTTPBasic)
            // The proxy consumed its credential: the origin saw none.
            let headers = try echoedHeaders(data)
            #expect(headers["proxy-authorization"] == nil && headers["authorization"] == nil)
            #expect(proxy.records.last?.authorized == true)
        }
    }

    @Test func connect407_isAProxyChallenge_andTheTunnelOpensAfterTheAnswer() async throws {
        try await withProxy(LoopbackServer.Options(tls: true), requiring: ("u", "p")) { server, proxy in
            let answers = ProxyAnswers(URLCredential(user: "u", password: "p", persistence: .none))
            let session = Session(
                configuration: configuration(.http(host: "127.0.0.1", port: proxy.port), trusting: server))
            let (data, _) = try await session.data(from: server.url("/echo"), delegate: answers)
            let space = try #require(answers.spaces.withLock { $0.first })
            #expect(space.isProxy())
            #expect(space.proxyType == NSURLProtectionSpaceHTTPSProxy)
            #expect(space.authenticationMethod == NSURLAuthenticationMethodHTTPBasic)
            #expect(try echoedHeaders(data)["proxy-authorization"] == nil)
            #expect(proxy.records.map(\.method) == ["CONNECT", "CONNECT"])
            #expect(proxy.records.last?.authorized == true)
        }
    }

    @Test func configuredProxyCredentials_answerTheProxyWithoutAChallenge() async throws {
        try await withProxy(LoopbackServer.Options(tls: true), requiring: ("u", "p")) { server, proxy in
            var proxyConfiguration = ProxyConfiguration.http(host: "127.0.0.1", port: proxy.port)
            proxyConfiguration.user = "u"
            proxyConfiguration.password = "p"
            let answers = ProxyAnswers(nil)
            let session = Session(configuration: configuration(proxyConfiguration, trusting: server))
            let (data, _) = try await session.data(from: server.url("/bytes/4"), delegate: answers)
            #expect(data.count == 4)
            #expect(answers.spaces.withLock { $0.isEmpty })
        }
    }

    @Test func unanswered407_forwarded_isTheResponse() async throws {
        try await withProxy(requiring: ("u", "p")) { server, proxy in
            let session = Session(configuration: configuration(.http(host: "127.0.0.1", port: proxy.port)))
            let (_, response) = try await session.data(from: server.url("/bytes/1"), delegate: ProxyAnswers(nil))
            #expect((response as? HTTPURLResponse)?.statusCode == 407)
        }
    }

    @Test func unanswered407_toCONNECT_failsNamingTheProxy() async throws {
        try await withProxy(LoopbackServer.Options(tls: true), requiring: ("u", "p")) { server, proxy in
            let session = Session(
                configuration: configuration(.http(host: "127.0.0.1", port: proxy.port), trusting: server))
            let error = await #expect(throws: URLError.self) {
                _ = try await session.data(from: server.url("/bytes/1"), delegate: ProxyAnswers(nil))
            }
            #expect(error?.code == .userAuthenticationRequired)
            #expect(error?.localizedDescription.contains("proxy") == true)
        }
    }

    @Test func sessionKeepsAForSessionProxyAnswer_forItsNextTask() async throws {
        try await withProxy(requiring: ("u", "p")) { server, proxy in
            let answers = ProxyAnswers(URLCredential(user: "u", password: "p", persistence: .forSession))
            let session = Session(configuration: configuration(.http(host: "127.0.0.1", port: proxy.port)), delegate: answers)
            _ = try await session.data(from: server.url("/bytes/1"))
            _ = try await session.data(from: server.url("/bytes/1"))
            #expect(answers.spaces.withLock { $0.count } == 1)
        }
    }

    @Test func environmentProxies_areNotUsedUnlessAskedFor() async throws {
        // In a child process, the fetch CLI: setenv here would race with
        // the threads of every other test (and their curl subprocesses).
        let fetch = try fetchExecutablePath()
        try await withProxy { server, proxy in
            let url = server.url("/bytes/2").absoluteString
            let environment = ["http_proxy": proxy.url.absoluteString, "PATH": "/usr/bin:/bin"]
            let plain = try await Self.run(fetch, ["-s", url], environment: environment)
            #expect(plain == 0)
            #expect(proxy.records.isEmpty)
            let optedIn = try await Self.run(fetch, ["-s", "--proxy-from-environment", url], environment: environment)
            #expect(optedIn == 0)
            #expect(proxy.records.count == 1)
        }
    }

    private static func run(_ executable: String, _ arguments: [String], environment: [String: String]) async throws -> Int32 {
        try await ChildProcess.run(executable, arguments, environment: environment).status
    }
}

/// `ProxyConfiguration.fromEnvironment`: curl's reading of the variables.
@Suite struct ProxyEnvironmentTests {
    @Test func schemesAndExceptions() throws {
        let configuration = try #require(ProxyConfiguration.fromEnvironment([
            "http_proxy": "proxy.example:3128",
            "HTTPS_PROXY": "http://user:p%40ss@secure.example:8443",
            "no_proxy": "localhost, .internal.example",
        ]))
        #expect(configuration.http == .init(host: "proxy.example", port: 3128))
        #expect(configuration.https == .init(host: "secure.example", port: 8443))
        #expect(configuration.user == "user" && configuration.password == "p@ss")
        #expect(configuration.exceptions == ["localhost", ".internal.example"])
    }

    @Test func upperCaseHTTP_PROXY_isIgnored() {
        // httpoxy: a CGI server sets HTTP_PROXY from a request's Proxy header.
        #expect(ProxyConfiguration.fromEnvironment(["HTTP_PROXY": "evil.example:80"]) == nil)
    }

    @Test func allProxy_coversBothSchemes_andSocksIsSocks() throws {
        let http = try #require(ProxyConfiguration.fromEnvironment(["all_proxy": "http://p.example:1"]))
        #expect(http.http?.host == "p.example" && http.https?.host == "p.example")
        let socks = try #require(ProxyConfiguration.fromEnvironment(["ALL_PROXY": "socks5h://s.example"]))
        #expect(socks.socks == .init(host: "s.example", port: 1080))
        #expect(socks.http == nil)
    }

    @Test func nothingSet_isNil() {
        #expect(ProxyConfiguration.fromEnvironment([:]) == nil)
        #expect(ProxyConfiguration.fromEnvironment(["no_proxy": "x"]) == nil)
    }
}
