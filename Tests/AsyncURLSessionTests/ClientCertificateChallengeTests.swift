import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Synchronization
import Testing

/// Client-certificate challenges (`offersTLSChallenges`): a server that asks
/// for a certificate, with none configured, stops the handshake and the
/// task's handlers choose an identity (or none).
@Suite struct ClientCertificateChallengeTests {
    private let options = LoopbackServer.Options(tls: true, requireClientCertificate: true)

    /// Answers client-certificate challenges with `identity` (default
    /// handling when nil, or a cancel), and server trust by default.
    final class IdentityHandler: SessionTaskDelegate {
        let identity: ClientIdentity?
        let cancels: Bool
        let persistence: URLCredential.Persistence
        let methods = Mutex<[String]>([])
        init(_ identity: ClientIdentity?, cancels: Bool = false, persistence: URLCredential.Persistence = .forSession) {
            self.identity = identity
            self.cancels = cancels
            self.persistence = persistence
        }

        func task(_ task: SessionTask, didReceive challenge: ChallengeDecision) async {
            let method = challenge.protectionSpace.authenticationMethod
            methods.withLock { $0.append(method) }
            guard method == NSURLAuthenticationMethodClientCertificate else { return challenge.performDefaultHandling() }
            if cancels { return challenge.cancel() }
            if let identity {
                challenge.useCredential(URLCredential(identity: identity, persistence: persistence))
            } else {
                challenge.performDefaultHandling()
            }
        }

        var clientCertificateChallenges: Int {
            methods.withLock { $0.filter { $0 == NSURLAuthenticationMethodClientCertificate }.count }
        }
    }

    private func configuration(trusting server: LoopbackServer) -> SessionConfiguration {
        var configuration = testConfiguration(trusting: server)
        configuration.offersTLSChallenges = true
        return configuration
    }

    private func identity(of server: LoopbackServer) throws -> ClientIdentity {
        let pem = try #require(server.clientIdentityPEM)
        return .pem(certificate: pem.certificate, privateKey: pem.privateKey)
    }

    @Test func identityFromTheHandler_isPresented() async throws {
        try await withServer(options) { server in
            let handler = IdentityHandler(try identity(of: server))
            let (data, _) = try await Session(configuration: configuration(trusting: server))
                .data(from: server.url("/bytes/3"), delegate: handler)
            #expect(data.count == 3)
            // Server trust first (a new connection), then the certificate.
            #expect(handler.methods.withLock { $0 } == [
                NSURLAuthenticationMethodServerTrust, NSURLAuthenticationMethodClientCertificate,
            ])
        }
    }

    @Test func challenge_namesTheServer() async throws {
        try await withServer(options) { server in
            let task = Session(configuration: configuration(trusting: server)).dataTask(with: server.url("/bytes/1"))
            task.resume()
            var space: URLProtectionSpace?
            for try await event in task.events {
                guard case .challenge(let decision) = event else { continue }
                if decision.protectionSpace.authenticationMethod == NSURLAuthenticationMethodClientCertificate {
                    space = decision.protectionSpace
                    #expect(decision.isConnectionLevel)
                    #expect(decision.failureResponse == nil)
                    decision.useCredential(URLCredential(identity: try identity(of: server)))
                } else {
                    decision.performDefaultHandling()
                }
            }
            #expect(space?.host == "127.0.0.1")
            #expect(space?.port == server.port)
            #expect(space?.protocol == "https")
        }
    }

    @Test func defaultHandling_sendsNone_andTheServerRefuses() async throws {
        try await withServer(options) { server in
            let handler = IdentityHandler(nil)
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration(trusting: server))
                    .data(from: server.url("/bytes/1"), delegate: handler)
            }
            #expect([.clientCertificateRequired, .networkConnectionLost, .secureConnectionFailed].contains(error?.code))
            #expect(handler.clientCertificateChallenges == 1)
        }
    }

    @Test func cancel_failsAsCancelled() async throws {
        try await withServer(options) { server in
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration(trusting: server))
                    .data(from: server.url("/bytes/1"), delegate: IdentityHandler(nil, cancels: true))
            }
            #expect(error?.code == .cancelled)
        }
    }

    @Test func sessionAnswer_servesTheNextTaskWithoutAsking() async throws {
        try await withServer(options) { server in
            let handler = IdentityHandler(try identity(of: server))
            let session = Session(configuration: configuration(trusting: server), delegate: handler)
            for _ in 0..<3 {
                let (data, _) = try await session.data(from: server.url("/bytes/2"))
                #expect(data.count == 2)
            }
            #expect(handler.clientCertificateChallenges == 1)
        }
    }

    @Test func answerWithoutPersistence_isNotRemembered() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: false, requireClientCertificate: true)) { server in
            let handler = IdentityHandler(try identity(of: server), persistence: .none)
            let session = Session(configuration: configuration(trusting: server), delegate: handler)
            _ = try await session.data(from: server.url("/bytes/1"))
            // A second task starts without the identity: the connection the
            // first one made presents it, so it is not reused, and a new one asks.
            _ = try await session.data(from: server.url("/bytes/1"))
            #expect(handler.clientCertificateChallenges == 2)
        }
    }

    @Test func serverThatAsksForNothing_raisesNoClientCertificateChallenge() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let handler = IdentityHandler(nil)
            _ = try await Session(configuration: configuration(trusting: server))
                .data(from: server.url("/bytes/1"), delegate: handler)
            #expect(handler.clientCertificateChallenges == 0)
        }
    }

    @Test func configuredIdentity_isPresentedWithoutAChallenge() async throws {
        try await withServer(options) { server in
            var configuration = configuration(trusting: server)
            configuration.clientIdentity = try identity(of: server)
            let handler = IdentityHandler(nil)
            let (data, _) = try await Session(configuration: configuration).data(from: server.url("/bytes/4"), delegate: handler)
            #expect(data.count == 4)
            #expect(handler.clientCertificateChallenges == 0)
        }
    }
}
