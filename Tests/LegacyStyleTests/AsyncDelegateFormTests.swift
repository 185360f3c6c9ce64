import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// Delegates written for Apple's platforms implement the async forms of the
/// methods that answer (`needNewBodyStreamForTask`, `didReceive response`,
/// redirects, challenges, caching) and no completion-handler form: Apple
/// calls them, so the adapter does. (swift-openapi-urlsession's streaming
/// transport hung or failed on each of these before.)
@Suite struct AsyncDelegateFormTests {
    @Test func asyncNeedNewBodyStream_sendsTheStreamItReturns() async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 300_000)
            let delegate = AppleStyleDelegate(bodyStream: { InputStream(data: body) })
            var request = URLRequest(url: server.url("/echo-body"))
            request.httpMethod = "POST"
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .uploadTask(withStreamedRequest: request).resume()
            await delegate.completed.wait()
            #expect(delegate.error == nil)
            #expect(delegate.body == body)
            #expect(delegate.calls.first == "needNewBodyStream")
        }
    }

    @Test func asyncDidReceiveResponse_answeredCancel_cancelsTheTask() async throws {
        try await withServer { server in
            let delegate = AppleStyleDelegate(disposition: .cancel)
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/bytes/5000")).resume()
            await delegate.completed.wait()
            #expect(delegate.calls.contains("response"))
            #expect(!delegate.calls.contains("data"))
            #expect((delegate.error as? URLError)?.code == .cancelled)
        }
    }

    @Test func asyncDidReceiveResponse_ofATasksOwnDelegate_isAskedBeforeTheBody() async throws {
        try await withServer { server in
            // swift-openapi-urlsession's shape: a session without a delegate,
            // the task's own delegate set before resume.
            let delegate = AppleStyleDelegate(disposition: .allow)
            let task = URLSession(configuration: legacyConfiguration()).dataTask(with: server.url("/bytes/5000"))
            task.delegate = delegate
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.error == nil)
            #expect(delegate.calls.first == "response")
            #expect(delegate.body.count == 5000)
        }
    }

    @Test func asyncRedirect_answeredNil_makesTheRedirectTheResult() async throws {
        try await withServer { server in
            let delegate = AppleStyleDelegate(followsRedirects: false)
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/redirect/2")).resume()
            await delegate.completed.wait()
            #expect(delegate.error == nil)
            #expect(delegate.calls.filter { $0 == "redirect" }.count == 1)
            #expect(delegate.status == 302)
        }
    }

    @Test func asyncTaskChallenge_answeredWithACredential_isRetriedWithIt() async throws {
        try await withServer { server in
            let delegate = AppleStyleDelegate(credential: URLCredential(user: "u", password: "p", persistence: .forSession))
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/auth/basic?user=u&password=p")).resume()
            await delegate.completed.wait()
            #expect(delegate.error == nil)
            #expect(delegate.calls.filter { $0 == "challenge" }.count == 1)
            #expect(delegate.status == 200)
        }
    }

    @Test func aTasksAsyncForm_comesBeforeTheSessionsCompletionHandlerForm() async throws {
        try await withServer { server in
            let sessionDelegate = CompletionFormDelegate()
            let taskDelegate = AppleStyleDelegate(disposition: .cancel)
            let session = URLSession(configuration: legacyConfiguration(), delegate: sessionDelegate, delegateQueue: nil)
            let task = session.dataTask(with: server.url("/bytes/100"))
            task.delegate = taskDelegate
            task.resume()
            await taskDelegate.completed.wait()
            #expect(taskDelegate.calls.contains("response"))
            #expect(sessionDelegate.responses.load(ordering: .relaxed) == 0)
            #expect((taskDelegate.error as? URLError)?.code == .cancelled)
            session.finishTasksAndInvalidate()
        }
    }
}

/// A delegate as code for Apple's platforms writes it: async forms only.
private final class AppleStyleDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var calls: [String] = []
        var body = Data()
        var error: (any Error)?
        var status = 0
    }

    private let state = Mutex(State())
    private let bodyStream: (@Sendable () -> InputStream)?
    private let disposition: URLSession.ResponseDisposition
    private let followsRedirects: Bool
    private let credential: URLCredential?
    let completed = Signal()

    init(
        bodyStream: (@Sendable () -> InputStream)? = nil, disposition: URLSession.ResponseDisposition = .allow,
        followsRedirects: Bool = true, credential: URLCredential? = nil
    ) {
        self.bodyStream = bodyStream
        self.disposition = disposition
        self.followsRedirects = followsRedirects
        self.credential = credential
    }

    var calls: [String] { state.withLock { $0.calls } }
    var body: Data { state.withLock { $0.body } }
    var error: (any Error)? { state.withLock { $0.error } }
    var status: Int { state.withLock { $0.status } }

    private func note(_ call: String) { state.withLock { $0.calls.append(call) } }

    func urlSession(_ session: URLSession, needNewBodyStreamForTask task: URLSessionTask) async -> InputStream? {
        note("needNewBodyStream")
        return bodyStream?()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse
    ) async -> URLSession.ResponseDisposition {
        note("response")
        // Answered after a suspension, as async code does.
        await Task.yield()
        return disposition
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest
    ) async -> URLRequest? {
        note("redirect")
        return followsRedirects ? request : nil
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        note("challenge")
        return challenge.previousFailureCount == 0 && credential != nil
            ? (.useCredential, credential) : (.performDefaultHandling, nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLock {
            $0.calls.append("data")
            $0.body.append(data)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLock {
            $0.error = error
            $0.status = (task.response as? HTTPURLResponse)?.statusCode ?? 0
        }
        completed.fire()
    }
}

/// A session delegate with the completion-handler form of didReceive response.
private final class CompletionFormDelegate: NSObject, URLSessionDataDelegate, Sendable {
    let responses = Atomic<Int>(0)

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        responses.add(1, ordering: .relaxed)
        completionHandler(.allow)
    }
}
