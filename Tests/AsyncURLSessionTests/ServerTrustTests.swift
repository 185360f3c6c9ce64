import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Synchronization
import Testing

/// Server-trust challenges (`offersTLSChallenges`): each new TLS
/// connection's chain goes to the task's handlers before anything is sent,
/// with default verification's verdict, and their answer decides.
@Suite struct ServerTrustTests {
    /// Answers every server-trust challenge with `answer`, recording what it saw.
    final class TrustHandler: SessionTaskDelegate {
        enum Answer: Sendable { case trust, defaultHandling, cancel, reject }
        let answer: Answer
        let seen = Mutex<[ServerTrust]>([])
        init(_ answer: Answer) { self.answer = answer }

        func task(_ task: SessionTask, didReceive challenge: ChallengeDecision) async {
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
                let trust = challenge.protectionSpace.serverTrust
            else { return }
            seen.withLock { $0.append(trust) }
            switch answer {
            case .trust: challenge.useCredential(URLCredential(trust: trust))
            case .defaultHandling: challenge.performDefaultHandling()
            case .cancel: challenge.cancel()
            case .reject: challenge.rejectProtectionSpace()
            }
        }

        var trusts: [ServerTrust] { seen.withLock { $0 } }
    }

    /// A session that does not trust the loopback server's self-signed
    /// certificate unless `trusting`, and offers server-trust challenges.
    private func configuration(trusting server: LoopbackServer? = nil) -> SessionConfiguration {
        var configuration = testConfiguration(trusting: server)
        configuration.offersTLSChallenges = true
        return configuration
    }

    @Test func selfSignedServer_trustedByTheHandler_loads() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let handler = TrustHandler(.trust)
            let session = Session(configuration: configuration())
            let (data, response) = try await session.data(from: server.url("/bytes/10"), delegate: handler)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data.count == 10)
            #expect(handler.trusts.count == 1)
        }
    }

    @Test func challenge_carriesTheChainAndTheDefaultVerdict() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let handler = TrustHandler(.trust)
            _ = try await Session(configuration: configuration()).data(from: server.url("/bytes/1"), delegate: handler)
            let trust = try #require(handler.trusts.first)
            #expect(trust.host == "127.0.0.1")
            #expect(trust.port == server.port)
            #expect(trust.certificates.count == 1)
            #expect(trust.isTrustedByDefault == false)
            #expect(trust.verificationResult == 18)  // self-signed
            #expect(trust.verificationError?.code == .serverCertificateUntrusted)
            let leaf = try #require(trust.leaf)
            #expect(leaf.subjectAlternativeNames.contains("IP:127.0.0.1"))
            #expect(leaf.subject == leaf.issuer)
            #expect(leaf.isValid())
            #expect(leaf.publicKeyPin == "sha256//" + (try #require(server.publicKeySHA256)))
            #expect(leaf.sha256Fingerprint.count == 32)
            #expect(TLSCertificate(derData: leaf.derData) == leaf)
        }
    }

    @Test func defaultHandling_ofAnUntrustedServer_failsNamingTheProblemAndTheFix() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let handler = TrustHandler(.defaultHandling)
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration()).data(from: server.url("/bytes/1"), delegate: handler)
            }
            #expect(error?.code == .serverCertificateUntrusted)
            #expect(error?.localizedDescription.contains("tlsTrustRootsPEM") == true)
            #expect(handler.trusts.count == 1)
        }
    }

    @Test func defaultHandling_ofATrustedServer_loads() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let handler = TrustHandler(.defaultHandling)
            let (data, _) = try await Session(configuration: configuration(trusting: server))
                .data(from: server.url("/bytes/5"), delegate: handler)
            #expect(data.count == 5)
            #expect(handler.trusts.first?.isTrustedByDefault == true)
            #expect(handler.trusts.first?.verificationError == nil)
        }
    }

    @Test(arguments: [TrustHandler.Answer.cancel, .reject])
    func cancelOrReject_failsAsCancelled(_ answer: TrustHandler.Answer) async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let handler = TrustHandler(answer)
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration(trusting: server))
                    .data(from: server.url("/bytes/1"), delegate: handler)
            }
            #expect(error?.code == .cancelled)
        }
    }

    @Test func expiredCertificate_isReportedAsExpired_andCanBeTrusted() async throws {
        try await withServer(LoopbackServer.Options(tls: true, certificate: .expired)) { server in
            let handler = TrustHandler(.trust)
            let (data, _) = try await Session(configuration: configuration(trusting: server))
                .data(from: server.url("/bytes/2"), delegate: handler)
            #expect(data.count == 2)
            let trust = try #require(handler.trusts.first)
            #expect(trust.verificationResult == 10)
            #expect(trust.verificationError?.code == .serverCertificateHasBadDate)
            #expect(trust.leaf?.isValid() == false)
        }
    }

    @Test func wrongHost_namesTheHostAndTheCertificatesNames() async throws {
        try await withServer(LoopbackServer.Options(tls: true, certificate: .wrongHost)) { server in
            let handler = TrustHandler(.defaultHandling)
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration(trusting: server))
                    .data(from: server.url("/bytes/1"), delegate: handler)
            }
            let trust = try #require(handler.trusts.first)
            #expect(trust.verificationResult == 64)  // IP address mismatch
            let text = error?.localizedDescription ?? ""
            #expect(text.contains("127.0.0.1") && text.contains("example.invalid"))
        }
    }

    @Test func wrongHost_trustedByTheHandler_loads() async throws {
        try await withServer(LoopbackServer.Options(tls: true, certificate: .wrongHost)) { server in
            let handler = TrustHandler(.trust)
            let (data, _) = try await Session(configuration: configuration(trusting: server))
                .data(from: server.url("/bytes/3"), delegate: handler)
            #expect(data.count == 3)
        }
    }

    @Test func eventsConsumer_answersTheChallenge() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let task = Session(configuration: configuration()).dataTask(with: server.url("/bytes/4"))
            task.resume()
            var body = Data()
            var challenges = 0
            for try await event in task.events {
                switch event {
                case .challenge(let decision):
                    challenges += 1
                    let trust = try #require(decision.serverTrust)
                    decision.useCredential(URLCredential(trust: trust))
                case .data(let chunk): body.append(chunk)
                default: break
                }
            }
            #expect(challenges == 1)
            #expect(body.count == 4)
        }
    }

    @Test func aTaskCanOfferChallengesWhereItsSessionDoesNot() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let handler = TrustHandler(.trust)
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/6"), delegate: handler)
            #expect(task.offersTLSChallenges == false)
            task.offersTLSChallenges = true
            task.collectBody()
            task.resume()
            let (data, _) = try await task.collectedData()
            #expect(data.count == 6)
            #expect(handler.trusts.count == 1)
        }
    }

    @Test func aCredentialForAnotherChain_isDefaultHandling() async throws {
        // A password credential answers nothing about a chain.
        final class WrongCredential: SessionTaskDelegate {
            func task(_ task: SessionTask, didReceive challenge: ChallengeDecision) async {
                challenge.useCredential(URLCredential(user: "u", password: "p", persistence: .none))
            }
        }
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration()).data(from: server.url("/bytes/1"), delegate: WrongCredential())
            }
            #expect(error?.code == .serverCertificateUntrusted)
        }
    }

    @Test func reusedConnection_isNotAskedAgain() async throws {
        // As Apple: trust is judged per new connection. Sequential HTTP/1.1
        // requests of one session reuse the connection the answer trusted.
        try await withServer(LoopbackServer.Options(tls: true, http2: false)) { server in
            let handler = TrustHandler(.trust)
            let session = Session(configuration: configuration(), delegate: handler)
            for _ in 0..<3 {
                let (data, _) = try await session.data(from: server.url("/bytes/1"))
                #expect(data.count == 1)
            }
            #expect(handler.trusts.count == 1)
        }
    }

    @Test func connectionTrustedByAnAnswer_neverServesATaskThatDoesNotOffer() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: false)) { server in
            let session = Session(configuration: configuration())
            _ = try await session.data(from: server.url("/bytes/1"), delegate: TrustHandler(.trust))
            let plain = session.dataTask(with: server.url("/bytes/1"))
            plain.offersTLSChallenges = false
            plain.collectBody()
            plain.resume()
            let error = await #expect(throws: URLError.self) { _ = try await plain.collectedData() }
            #expect(error?.code == .serverCertificateUntrusted)
        }
    }

    @Test func stoppedHandshake_isNotATransaction() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let task = Session(configuration: configuration()).dataTask(
                with: server.url("/bytes/1"), delegate: TrustHandler(.trust))
            task.collectBody()
            task.resume()
            _ = try await task.collectedData()
            let metrics = try #require(task.metrics)
            #expect(metrics.transactionMetrics.count == 1)
            #expect(metrics.transactionMetrics.first?.response?.statusCode == 200)
        }
    }

    @Test func redirectToTheSameServer_isNotAskedAgain() async throws {
        // The task's answer holds for its later hops to the same host and port.
        try await withServer(LoopbackServer.Options(tls: true, http2: false)) { server in
            let handler = TrustHandler(.trust)
            let (_, response) = try await Session(configuration: configuration())
                .data(from: server.url("/redirect/2"), delegate: handler)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(handler.trusts.count == 1)
        }
    }

    @Test func concurrentTasksOverHTTP2_allLoad() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: true)) { server in
            let handler = TrustHandler(.trust)
            let session = Session(configuration: configuration(), delegate: handler)
            let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                for size in 1...8 {
                    group.addTask { try await session.data(from: server.url("/bytes/\(size)")).0.count }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(sizes.sorted() == Array(1...8))
            #expect(!handler.trusts.isEmpty)
        }
    }

    @Test func chainFromATestCA_isOfferedLeafFirst_andNamesTheMissingRoot() async throws {
        try await withServer(LoopbackServer.Options(tls: true, certificate: .issuedByTestCA)) { server in
            let handler = TrustHandler(.defaultHandling)
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration()).data(from: server.url("/bytes/1"), delegate: handler)
            }
            let trust = try #require(handler.trusts.first)
            #expect(trust.certificates.count == 2)
            #expect(trust.certificates.first?.subject.contains("CN=localhost") == true)
            #expect(trust.certificates.first?.issuer.contains("AsyncURLSession Test CA") == true)
            #expect(trust.certificates.last?.subject.contains("AsyncURLSession Test CA") == true)
            #expect(error?.code == .serverCertificateHasUnknownRoot || error?.code == .serverCertificateUntrusted)
            let text = error?.localizedDescription ?? ""
            #expect(text.contains("AsyncURLSession Test CA") && text.contains("tlsTrustRootsPEM"))
        }
    }

    @Test func chainFromATrustedTestCA_passesDefaultVerification() async throws {
        try await withServer(LoopbackServer.Options(tls: true, certificate: .issuedByTestCA)) { server in
            let handler = TrustHandler(.defaultHandling)
            let (data, _) = try await Session(configuration: configuration(trusting: server))
                .data(from: server.url("/bytes/9"), delegate: handler)
            #expect(data.count == 9)
            #expect(handler.trusts.first?.isTrustedByDefault == true)
        }
    }

    @Test func plainHTTP_isNeverChallenged() async throws {
        try await withServer { server in
            let handler = TrustHandler(.cancel)
            let (data, _) = try await Session(configuration: configuration()).data(from: server.url("/bytes/1"), delegate: handler)
            #expect(data.count == 1)
            #expect(handler.trusts.isEmpty)
        }
    }
}
