import Foundation
import Testing
import TestSupport
import URLSessionCompat

/// Challenges: which method is asked, and what the answers do.
@Suite struct ChallengeDelegateTests {
    @Test func basic_goesToTheTaskLevelMethodOnly() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate(
                challenge: { _ in (.useCredential, URLCredential(user: "ann", password: "pw", persistence: .none)) },
                sessionChallenge: { _ in (.cancelAuthenticationChallenge, nil) })
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/auth/basic?user=ann&password=pw"))
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.calls(task).first == "challenge \(NSURLAuthenticationMethodHTTPBasic) 0")
            #expect((task.response as? HTTPURLResponse)?.statusCode == 200)
            #expect(delegate.sessionCalls.isEmpty)
            session.invalidateAndCancel()
        }
    }

    @Test func digest_withCredential_succeeds() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate(challenge: { _ in
                (.useCredential, URLCredential(user: "ann", password: "pw", persistence: .none))
            })
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/auth/digest?user=ann&password=pw"))
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.calls(task).first == "challenge \(NSURLAuthenticationMethodHTTPDigest) 0")
            #expect((task.response as? HTTPURLResponse)?.statusCode == 200)
            session.invalidateAndCancel()
        }
    }

    @Test func connectionLevelMethod_goesToTheSessionLevelMethodFirst() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate(sessionChallenge: { _ in (.cancelAuthenticationChallenge, nil) })
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/auth/ntlm"))
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.sessionCalls == ["session challenge \(NSURLAuthenticationMethodNTLM)"])
            #expect(!delegate.calls(task).contains { $0.hasPrefix("challenge") })
            #expect((delegate.error(task) as? URLError)?.code == .cancelled)
            session.invalidateAndCancel()
        }
    }

    @Test func connectionLevelMethod_withoutSessionMethod_goesToTheTaskLevelMethod() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate(challenge: { _ in (.cancelAuthenticationChallenge, nil) })
            let session = makeSession(TaskOnlyDelegate(forwardingTo: delegate))
            let task = session.dataTask(with: server.url("/auth/ntlm"))
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.calls(task).first == "challenge \(NSURLAuthenticationMethodNTLM) 0")
            session.invalidateAndCancel()
        }
    }

    @Test func notImplemented_usesTheConfigurationsCredentialStorage() async throws {
        try await withServer { server in
            let delegate = CompletionOnlyDelegate()
            let storage = URLCredentialStorage()
            let space = URLProtectionSpace(
                host: "127.0.0.1", port: server.port, protocol: "http", realm: "loopback",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
            storage.setDefaultCredential(URLCredential(user: "ann", password: "pw", persistence: .forSession), for: space)
            let session = makeSession(delegate) { $0.urlCredentialStorage = storage }
            let task = session.dataTask(with: server.url("/auth/basic?user=ann&password=pw"))
            task.resume()
            await delegate.completed.wait()
            #expect((task.response as? HTTPURLResponse)?.statusCode == 200)
            session.invalidateAndCancel()
        }
    }

    @Test func wrongCredentials_countFailuresThenTheResponseIsTheResult() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate(challenge: { challenge in
                challenge.previousFailureCount < 2
                    ? (.useCredential, URLCredential(user: "ann", password: "wrong", persistence: .none))
                    : (.rejectProtectionSpace, nil)
            })
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/auth/basic?user=ann&password=pw"))
            task.resume()
            await delegate.completed.wait()
            let challenges = delegate.calls(task).filter { $0.hasPrefix("challenge") }
            #expect(challenges.map { $0.split(separator: " ").last } == ["0", "1", "2"])
            #expect((task.response as? HTTPURLResponse)?.statusCode == 401)
            session.invalidateAndCancel()
        }
    }
}

/// Forwards task-level calls to a recording delegate, without implementing
/// the session-level challenge method.
final class TaskOnlyDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    let target: RecordingDelegate
    init(forwardingTo target: RecordingDelegate) { self.target = target }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        target.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        target.urlSession(session, task: task, didCompleteWithError: error)
    }
}
