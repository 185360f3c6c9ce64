import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// The local side of connections (issue 55): `localEndpoint`
/// (CURLOPT_INTERFACE), `ipVersion` (CURLOPT_IPRESOLVE) and
/// `happyEyeballsDelay`.
@Suite struct LocalEndpointTests {
    @Test func boundToALocalAddress_connectsFromIt() async throws {
        try await withServer { server in
            for address in ["127.0.0.1", "127.0.0.2"] {
                var configuration = testConfiguration()
                configuration.localEndpoint = try .address(address)
                let task = Session(configuration: configuration).dataTask(with: server.url("/bytes/4"))
                task.resume()
                let recorded = await record(task)
                #expect(recorded.error == nil)
                #expect(recorded.body.count == 4)
                // The server saw the connection come from there.
                #expect(recorded.metrics?.transactionMetrics.last?.localAddress == address)
            }
        }
    }

    @Test func boundToAnAddressNotOfThisMachine_failsNamingIt() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.localEndpoint = try .address("192.0.2.77")  // TEST-NET-1
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration).data(from: server.url("/bytes/1"))
            }
            #expect(error?.code == .cannotConnectToHost)
            #expect(error?.localizedDescription.contains("192.0.2.77") == true, "\(String(describing: error))")
        }
    }

    @Test func missingInterface_failsNamingIt() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.localEndpoint = try .interface("nosuchif0")
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration).data(from: server.url("/bytes/1"))
            }
            #expect(error?.code == .cannotConnectToHost)
            #expect(error?.localizedDescription.contains("nosuchif0") == true, "\(String(describing: error))")
        }
    }

    @Test func ipv6Only_againstAnIPv4OnlyServer_fails_ipv4Only_works() async throws {
        try await withServer { server in
            // localhost has both 127.0.0.1 and ::1; the server listens on 127.0.0.1 only.
            let url = try #require(URL(string: "http://localhost:\(server.port)/bytes/2"))
            var v4 = testConfiguration()
            v4.ipVersion = .v4Only
            v4.happyEyeballsDelay = 0.05
            let (data, _) = try await Session(configuration: v4).data(from: url)
            #expect(data.count == 2)

            var v6 = testConfiguration()
            v6.ipVersion = .v6Only
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: v6).data(from: url)
            }
            #expect(error?.code == .cannotConnectToHost || error?.code == .cannotFindHost, "\(String(describing: error))")
            // An IPv4 address in the URL cannot be reached over IPv6 either.
            let literal = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: v6).data(from: server.url("/bytes/2"))
            }
            #expect(literal?.localizedDescription.contains("IPv6") == true, "\(String(describing: literal))")
        }
    }

    @Test func malformedEndpoints_areRefused() {
        #expect(throws: LocalEndpoint.Problem.self) { try LocalEndpoint.address("localhost") }
        #expect(throws: LocalEndpoint.Problem.self) { try LocalEndpoint.address("127.0.0.1\r\n") }
        #expect(throws: LocalEndpoint.Problem.self) { try LocalEndpoint.interface("") }
        #expect(throws: LocalEndpoint.Problem.self) { try LocalEndpoint.interface("a-very-long-interface-name") }
        #expect(throws: LocalEndpoint.Problem.self) { try LocalEndpoint.interface("eth0\n") }
    }
}
