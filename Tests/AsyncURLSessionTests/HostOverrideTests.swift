import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// Host overrides (`SessionConfiguration.hostOverrides`, issue 55): a name
/// and port sent to another address (curl's --resolve) or host and port
/// (--connect-to), while the request, SNI and certificate checks stay for
/// the URL's name.
@Suite struct HostOverrideTests {
    /// The Host header the loopback server's /echo saw.
    private func hostHeader(in data: Data) throws -> String? {
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let headers = try #require(json["headers"] as? [[String]])
        return headers.first { $0.first?.lowercased() == "host" }?.last
    }

    @Test func resolve_reachesTheTLSServerByName_verifyingItsCertificateForThatName() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            var configuration = testConfiguration(trusting: server)
            configuration.hostOverrides = [try .resolve("localhost", port: server.port, to: ["127.0.0.1"])]
            let session = Session(configuration: configuration)
            let url = try #require(URL(string: "https://localhost:\(server.port)/echo"))
            let (data, response) = try await session.data(from: url)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(try hostHeader(in: data) == "localhost:\(server.port)")
        }
    }

    @Test func resolve_isWhereTheConnectionGoes() async throws {
        // 127.0.0.2 is loopback too, but the server listens on 127.0.0.1
        // only: refused proves the override, not the system, chose the address.
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            var configuration = testConfiguration(trusting: server)
            configuration.hostOverrides = [try .resolve("localhost", port: server.port, to: ["127.0.0.2"])]
            let url = try #require(URL(string: "https://localhost:\(server.port)/bytes/1"))
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration).data(from: url)
            }
            #expect(error?.code == .cannotConnectToHost)
        }
    }

    @Test func resolve_ofAnotherName_stillChecksTheCertificateForThatName() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            var configuration = testConfiguration(trusting: server)
            configuration.hostOverrides = [try HostOverride(resolve: "api.example.test:\(server.port):127.0.0.1")]
            let url = try #require(URL(string: "https://api.example.test:\(server.port)/bytes/1"))
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration).data(from: url)
            }
            // The chain is trusted; only the name (not in the certificate) fails.
            #expect(error?.code == .serverCertificateUntrusted)
            #expect(error?.localizedDescription.contains("api.example.test") == true)
        }
    }

    @Test func resolve_overCleartext_sendsTheURLsName() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.hostOverrides = [try .resolve("api.example.test", port: server.port, to: ["127.0.0.1"])]
            let url = try #require(URL(string: "http://api.example.test:\(server.port)/echo"))
            let (data, _) = try await Session(configuration: configuration).data(from: url)
            #expect(try hostHeader(in: data) == "api.example.test:\(server.port)")
        }
    }

    @Test func connectTo_sendsTheNameAndPortElsewhere_keepingTheNameForTLS() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            var configuration = testConfiguration(trusting: server)
            // The URL says port 443; the connection goes to the server's port.
            configuration.hostOverrides = [try HostOverride(connectTo: "localhost:443:127.0.0.1:\(server.port)")]
            let url = try #require(URL(string: "https://localhost/echo"))
            let (data, response) = try await Session(configuration: configuration).data(from: url)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(try hostHeader(in: data) == "localhost")
        }
    }

    @Test func connectTo_ofAnotherName_stillChecksTheCertificateForThatName() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            var configuration = testConfiguration(trusting: server)
            configuration.hostOverrides = [try .connect("api.example.test", port: 443, to: "127.0.0.1", port: server.port)]
            let url = try #require(URL(string: "https://api.example.test/bytes/1"))
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration).data(from: url)
            }
            #expect(error?.code == .serverCertificateUntrusted)
        }
    }

    @Test func overrides_stayInTheirSession() async throws {
        try await withServer { server in
            let url = try #require(URL(string: "http://api.example.test:\(server.port)/bytes/3"))
            var configuration = testConfiguration()
            configuration.hostOverrides = [try .resolve("api.example.test", port: server.port, to: ["127.0.0.1"])]
            let (data, _) = try await Session(configuration: configuration).data(from: url)
            #expect(data.count == 3)
            // Another session has its own DNS cache: the name is unknown there
            // (.test is reserved, RFC 6761), before and after the first one ran.
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: testConfiguration()).data(from: url)
            }
            #expect(error?.code == .cannotFindHost)
        }
    }

    @Test func malformedEntries_areRefusedWhenMade() throws {
        #expect(throws: HostOverride.Problem.self) { try HostOverride(resolve: "example.com:443") }
        #expect(throws: HostOverride.Problem.self) { try HostOverride(resolve: "example.com:http:127.0.0.1") }
        #expect(throws: HostOverride.Problem.self) { try HostOverride(resolve: "example.com:443:not-an-address") }
        #expect(throws: HostOverride.Problem.self) { try HostOverride(resolve: "example.com:70000:127.0.0.1") }
        #expect(throws: HostOverride.Problem.self) { try HostOverride(resolve: "example.com:443:127.0.0.1\r\nX: y") }
        #expect(throws: HostOverride.Problem.self) { try HostOverride(resolve: "-example.com:443") }
        #expect(throws: HostOverride.Problem.self) { try HostOverride(connectTo: "example.com:443:other") }
        #expect(throws: HostOverride.Problem.self) { try HostOverride(connectTo: "example.com:443::") }
        #expect(throws: HostOverride.Problem.self) { try HostOverride.resolve("bad host", port: 443, to: ["127.0.0.1"]) }
        #expect(throws: HostOverride.Problem.self) { try HostOverride.resolve("example.com", port: 443, to: []) }
        #expect(throws: HostOverride.Problem.self) { try HostOverride.connect("a\nb", port: 1, to: "c", port: 2) }
        let problem = #expect(throws: HostOverride.Problem.self) { try HostOverride(resolve: "example.com:443:300.1.1.1") }
        #expect(problem?.description.contains("300.1.1.1") == true)
    }

    @Test func wellFormedEntries_keepCurlsSyntax() throws {
        #expect(try HostOverride(resolve: "Example.COM:443:127.0.0.1,::1").description == "example.com:443:127.0.0.1,[::1]")
        #expect(try HostOverride(resolve: "example.com:443:[::1]").description == "example.com:443:[::1]")
        #expect(try HostOverride(connectTo: "::example.org:").description == "::example.org:")
        #expect(try HostOverride(connectTo: "example.com:443:[::1]:8443").description == "example.com:443:[::1]:8443")
        let connect = try HostOverride(connectTo: "example.com::other.example:8443")
        #expect(connect.host == "example.com")
        #expect(connect.port == nil)
        #expect(connect.target == .endpoint(host: "other.example", port: 8443))
    }
}
