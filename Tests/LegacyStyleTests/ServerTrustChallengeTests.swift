import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// Server trust as legacy code handles it: `URLSessionDelegate`'s
/// challenge method sees `NSURLAuthenticationMethodServerTrust` with
/// `protectionSpace.serverTrust`, and answers with `URLCredential(trust:)`.
/// Sessions are made inline and never stored, as users do.
@Suite struct ServerTrustChallengeTests {
    /// Trusts any server (the classic "accept my self-signed server" delegate),
    /// answering on another thread after `delay` seconds when set.
    final class TrustingDelegate: NSObject, URLSessionDelegate, Sendable {
        let delay: Double?
        let calls = Mutex<[String]>([])
        init(answeringAfter delay: Double? = nil) { self.delay = delay }

        func urlSession(
            _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            calls.withLock { $0.append(challenge.protectionSpace.authenticationMethod) }
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
                let trust = challenge.protectionSpace.serverTrust
            else {
                completionHandler(.performDefaultHandling, nil)
                return
            }
            let credential = URLCredential(trust: trust)
            if let delay {
                DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
                    completionHandler(.useCredential, credential)
                }
            } else {
                completionHandler(.useCredential, credential)
            }
        }
    }

    /// Implements only the task-level challenge method.
    final class TaskLevelDelegate: NSObject, URLSessionTaskDelegate, Sendable {
        let disposition: URLSession.AuthChallengeDisposition
        let calls = Mutex(0)
        init(_ disposition: URLSession.AuthChallengeDisposition) { self.disposition = disposition }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            calls.withLock { $0 += 1 }
            let trust = challenge.protectionSpace.serverTrust
            completionHandler(disposition, disposition == .useCredential ? trust.map(URLCredential.init(trust:)) : nil)
        }
    }

    /// Implements no challenge method at all.
    final class QuietDelegate: NSObject, URLSessionDataDelegate, Sendable {}

    private func load(
        _ url: URL, configuration: URLSessionConfiguration = legacyConfiguration(),
        delegate: (any URLSessionDelegate)?
    ) async -> (Data?, URLResponse?, (any Error)?) {
        let result = HandlerResult<Data>()
        URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            .dataTask(with: url) { data, response, error in result.set(data, response, error) }
            .resume()
        return await result.value()
    }

    @Test func sessionDelegate_trustsASelfSignedServer_synchronously() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let delegate = TrustingDelegate()
            let (data, response, error) = await load(server.url("/bytes/7"), delegate: delegate)
            #expect(error == nil)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data?.count == 7)
            #expect(delegate.calls.withLock { $0 } == [NSURLAuthenticationMethodServerTrust])
        }
    }

    @Test func sessionDelegate_trustsFromAnotherThreadLater() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let (data, _, error) = await load(server.url("/bytes/3"), delegate: TrustingDelegate(answeringAfter: 0.2))
            #expect(error == nil)
            #expect(data?.count == 3)
        }
    }

    @Test func taskLevelMethod_getsServerTrust_whenTheSessionLevelOneIsMissing() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let delegate = TaskLevelDelegate(.useCredential)
            let (data, _, error) = await load(server.url("/bytes/2"), delegate: delegate)
            #expect(error == nil)
            #expect(data?.count == 2)
            #expect(delegate.calls.withLock { $0 } == 1)
        }
    }

    @Test func cancellingTheChallenge_failsAsCancelled() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let (_, _, error) = await load(server.url("/bytes/2"), delegate: TaskLevelDelegate(.cancelAuthenticationChallenge))
            #expect((error as? URLError)?.code == .cancelled)
        }
    }

    @Test func defaultHandling_ofATrustedServer_loads() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let configuration = legacyConfiguration()
            configuration.tlsTrustRootsPEM = server.certificatePEM
            let delegate = TaskLevelDelegate(.performDefaultHandling)
            let (data, _, error) = await load(server.url("/bytes/4"), configuration: configuration, delegate: delegate)
            #expect(error == nil)
            #expect(data?.count == 4)
            #expect(delegate.calls.withLock { $0 } == 1)
        }
    }

    @Test func delegateWithoutChallengeMethods_getsDefaultVerification() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let (_, _, error) = await load(server.url("/bytes/1"), delegate: QuietDelegate())
            #expect((error as? URLError)?.code == .serverCertificateUntrusted)
        }
    }

    @Test func withoutADelegate_verificationIsDefault() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let (_, _, error) = await load(server.url("/bytes/1"), delegate: nil)
            #expect((error as? URLError)?.code == .serverCertificateUntrusted)
        }
    }

    /// Presents a client certificate when asked; everything else by default.
    final class IdentityDelegate: NSObject, URLSessionDelegate, Sendable {
        let identity: ClientIdentity
        let methods = Mutex<[String]>([])
        init(_ identity: ClientIdentity) { self.identity = identity }

        func urlSession(
            _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            methods.withLock { $0.append(challenge.protectionSpace.authenticationMethod) }
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodClientCertificate {
                completionHandler(.useCredential, URLCredential(identity: identity, persistence: .forSession))
            } else {
                completionHandler(.performDefaultHandling, nil)
            }
        }
    }

    @Test func sessionDelegate_presentsAClientCertificateWhenAsked() async throws {
        try await withServer(LoopbackServer.Options(tls: true, requireClientCertificate: true)) { server in
            let pem = try #require(server.clientIdentityPEM)
            let delegate = IdentityDelegate(.pem(certificate: pem.certificate, privateKey: pem.privateKey))
            let configuration = legacyConfiguration()
            configuration.tlsTrustRootsPEM = server.certificatePEM
            let (data, _, error) = await load(server.url("/bytes/6"), configuration: configuration, delegate: delegate)
            #expect(error == nil)
            #expect(data?.count == 6)
            #expect(delegate.methods.withLock { $0 } == [
                NSURLAuthenticationMethodServerTrust, NSURLAuthenticationMethodClientCertificate,
            ])
        }
    }

    @Test func asyncCallWithATaskDelegate_trusts() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let delegate = TaskLevelDelegate(.useCredential)
            let (data, _) = try await URLSession(configuration: legacyConfiguration())
                .data(from: server.url("/bytes/5"), delegate: delegate)
            #expect(data.count == 5)
            #expect(delegate.calls.withLock { $0 } == 1)
        }
    }
}

/// Server trust on WebSocket and stream tasks: the same session-level
/// delegate method decides, as for data tasks.
@Suite struct ConnectionServerTrustTests {
    @Test func webSocket_overSelfSignedTLS_opensWhenTheDelegateTrustsIt() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let delegate = ServerTrustChallengeTests.TrustingDelegate(answeringAfter: 0.05)
            let task = URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .webSocketTask(with: URL(string: "wss://127.0.0.1:\(server.port)/ws/echo")!)
            task.resume()
            try await task.send(.string("over TLS"))
            guard case .string(let text) = try await task.receive() else { throw CancellationError() }
            #expect(text == "over TLS")
            #expect(delegate.calls.withLock { $0 } == [NSURLAuthenticationMethodServerTrust])
            task.cancel()
        }
    }

    @Test func webSocket_withoutADelegate_failsOnTheUntrustedChain() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let task = URLSession(configuration: legacyConfiguration())
                .webSocketTask(with: URL(string: "wss://127.0.0.1:\(server.port)/ws/echo")!)
            task.resume()
            let error = await #expect(throws: URLError.self) { try await task.send(.string("x")) }
            #expect(error?.code == .serverCertificateUntrusted)
        }
    }

    @Test func streamTask_taskLevelDelegateRejecting_failsTheWrite() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: false)) { server in
            let delegate = ServerTrustChallengeTests.TaskLevelDelegate(.cancelAuthenticationChallenge)
            let task = URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .streamTask(withHostName: "127.0.0.1", port: server.port)
            task.resume()
            task.startSecureConnection()
            let error = await #expect(throws: URLError.self) { try await task.write(Data("x".utf8), timeout: 10) }
            #expect(error?.code == .cancelled)
            #expect(delegate.calls.withLock { $0 } == 1)
        }
    }
}
