import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// `connectionProxyDictionary` as legacy code fills it, with Apple's
/// constants, and a proxy's 407 answered by the delegate.
@Suite struct ProxyDictionaryTests {
    /// Answers a proxy's challenge with u/p, anything else by default.
    final class ProxyCredentialDelegate: NSObject, URLSessionTaskDelegate, Sendable {
        let proxySpaces = Mutex<[URLProtectionSpace]>([])

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            guard challenge.protectionSpace.isProxy() else { return completionHandler(.performDefaultHandling, nil) }
            proxySpaces.withLock { $0.append(challenge.protectionSpace) }
            completionHandler(.useCredential, URLCredential(user: "u", password: "p", persistence: .forSession))
        }
    }

    private func load(
        _ url: URL, configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)? = nil
    ) async -> (Data?, URLResponse?, (any Error)?) {
        let result = HandlerResult<Data>()
        URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            .dataTask(with: url) { data, response, error in result.set(data, response, error) }
            .resume()
        return await result.value()
    }

    @Test func httpProxyFromTheDictionary_forwardsTheRequest() async throws {
        try await withProxy { server, proxy in
            let configuration = legacyConfiguration()
            configuration.connectionProxyDictionary = [
                kCFNetworkProxiesHTTPEnable: true,
                kCFNetworkProxiesHTTPProxy: "127.0.0.1",
                kCFNetworkProxiesHTTPPort: proxy.port,
            ]
            let (data, _, error) = await load(server.url("/bytes/9"), configuration: configuration)
            #expect(error == nil)
            #expect(data?.count == 9)
            #expect(proxy.records.first?.method == "GET")
        }
    }

    @Test func disabledProxy_isNotUsed() async throws {
        try await withProxy { server, proxy in
            let configuration = legacyConfiguration()
            configuration.connectionProxyDictionary = [
                kCFNetworkProxiesHTTPEnable: false,
                kCFNetworkProxiesHTTPProxy: "127.0.0.1",
                kCFNetworkProxiesHTTPPort: proxy.port,
            ]
            let (data, _, _) = await load(server.url("/bytes/2"), configuration: configuration)
            #expect(data?.count == 2)
            #expect(proxy.records.isEmpty)
        }
    }

    @Test func httpsProxy_407_isAnsweredByTheTaskDelegate() async throws {
        try await withProxy(LoopbackServer.Options(tls: true), requiring: ("u", "p")) { server, proxy in
            let configuration = legacyConfiguration()
            configuration.tlsTrustRootsPEM = server.certificatePEM
            configuration.connectionProxyDictionary = [
                kCFNetworkProxiesHTTPSEnable: 1,
                kCFNetworkProxiesHTTPSProxy: "127.0.0.1",
                kCFNetworkProxiesHTTPSPort: NSNumber(value: proxy.port),
            ]
            let delegate = ProxyCredentialDelegate()
            let (data, _, error) = await load(server.url("/bytes/5"), configuration: configuration, delegate: delegate)
            #expect(error == nil)
            #expect(data?.count == 5)
            let space = try #require(delegate.proxySpaces.withLock { $0.first })
            #expect(space.proxyType == NSURLProtectionSpaceHTTPSProxy)
            #expect(space.port == proxy.port)
            // A 407, then (the delegate also hears server trust, which costs
            // a handshake of its own) one or two tunnels with the credential.
            #expect(proxy.records.allSatisfy { $0.method == "CONNECT" })
            #expect(proxy.records.first?.authorized == false && proxy.records.last?.authorized == true)
        }
    }

    @Test func proxyCredentialsInTheDictionary_areSentToTheProxy() async throws {
        try await withProxy(requiring: ("u", "p")) { server, proxy in
            let configuration = legacyConfiguration()
            configuration.connectionProxyDictionary = [
                kCFNetworkProxiesHTTPEnable: true,
                kCFNetworkProxiesHTTPProxy: "127.0.0.1",
                kCFNetworkProxiesHTTPPort: proxy.port,
                kCFProxyUsernameKey: "u",
                kCFProxyPasswordKey: "p",
            ]
            let (_, response, error) = await load(server.url("/bytes/1"), configuration: configuration)
            #expect(error == nil)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
        }
    }

    @Test func dictionaryAndProxyConfiguration_agree() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.connectionProxyDictionary = [
            kCFNetworkProxiesSOCKSEnable: true, kCFNetworkProxiesSOCKSProxy: "socks.example",
            kCFNetworkProxiesExceptionsList: ["*.local"],
        ]
        #expect(configuration.proxyConfiguration?.socks == .init(host: "socks.example", port: 1080))
        #expect(configuration.proxyConfiguration?.exceptions == ["*.local"])
        configuration.proxyConfiguration = .http(host: "h.example", port: 8080)
        #expect(configuration.connectionProxyDictionary?[kCFNetworkProxiesHTTPSProxy] as? String == "h.example")
        configuration.connectionProxyDictionary = nil
        #expect(configuration.proxyConfiguration == nil)
    }
}
