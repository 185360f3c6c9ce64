import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// `SessionConfiguration.pinnedPublicKeys`: a pinned host must present one
/// of its keys, after normal verification.
@Suite struct PublicKeyPinningTests {
    private func configuration(_ server: LoopbackServer, pins: [String]) -> SessionConfiguration {
        var configuration = testConfiguration(trusting: server)
        configuration.pinnedPublicKeys = ["127.0.0.1": pins]
        return configuration
    }

    /// A well-formed pin of some other key.
    private let otherKey = Data(repeating: 7, count: 32).base64EncodedString()

    @Test func matchingPin_connects() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let pin = try #require(server.publicKeySHA256)
            let session = Session(configuration: configuration(server, pins: [otherKey, pin]))
            let (data, response) = try await session.data(from: server.url("/bytes/10"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data.count == 10)
        }
    }

    @Test func pinWithTheCurlPrefix_isAcceptedToo() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let pin = "sha256//" + (try #require(server.publicKeySHA256))
            let (data, _) = try await Session(configuration: configuration(server, pins: [pin]))
                .data(from: server.url("/bytes/3"))
            #expect(data.count == 3)
        }
    }

    @Test func otherKey_failsAsUntrusted_namingTheHostAndTheFix() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let session = Session(configuration: configuration(server, pins: [otherKey]))
            let error = await #expect(throws: URLError.self) {
                _ = try await session.data(from: server.url("/bytes/10"))
            }
            #expect(error?.code == .serverCertificateUntrusted)
            let text = error?.localizedDescription ?? ""
            #expect(text.contains("127.0.0.1") && text.contains("pinnedPublicKeys"))
        }
    }

    @Test func connectionMadeWithoutAPin_neverServesAPinnedRequest() async throws {
        // libcurl matches a pooled connection's TLS configuration, pins
        // included, before reusing it; whether or not two sessions share a
        // pool, the pinned request must get a handshake of its own.
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let unpinned = Session(configuration: testConfiguration(trusting: server))
            _ = try await unpinned.data(from: server.url("/bytes/1"))
            let pinned = Session(configuration: configuration(server, pins: [otherKey]))
            let error = await #expect(throws: URLError.self) { _ = try await pinned.data(from: server.url("/bytes/1")) }
            #expect(error?.code == .serverCertificateUntrusted)
            // And the unpinned session still connects.
            _ = try await unpinned.data(from: server.url("/bytes/1"))
        }
    }

    @Test func plainHTTP_isNeverPinned() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.pinnedPublicKeys = ["127.0.0.1": [otherKey]]
            let (data, _) = try await Session(configuration: configuration).data(from: server.url("/bytes/4"))
            #expect(data.count == 4)
        }
    }
}
