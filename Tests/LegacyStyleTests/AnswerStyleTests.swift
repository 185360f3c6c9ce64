import Foundation
import LoopbackServer
import Testing
import TestSupport
import URLSessionCompat

/// Every completion-handler delegate method answered the three ways legacy
/// code answers: inside the method, from another thread, after a delay.
@Suite struct AnswerStyleTests {
    @Test(arguments: AnswerStyle.allCases)
    func streamedUpload_whoseDelegateAnswers_sendsTheStream(style: AnswerStyle) async throws {
        try await withServer { server in
            let body = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0) })
            let delegate = LegacyDelegate(style: style, bodyStream: { InputStream(data: body) })
            var request = URLRequest(url: server.url("/echo-body"))
            request.httpMethod = "POST"
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .uploadTask(withStreamedRequest: request).resume()
            await delegate.completed.wait()
            #expect(delegate.error == nil)
            #expect(delegate.body == body)
            #expect(delegate.calls.prefix(2) == ["create", "needNewBodyStream"])
        }
    }

    @Test(arguments: AnswerStyle.allCases)
    func redirectAnsweredWithTheProposedRequest_isFollowed(style: AnswerStyle) async throws {
        try await withServer { server in
            let delegate = LegacyDelegate(style: style)
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/redirect/2")).resume()
            await delegate.completed.wait()
            #expect(delegate.error == nil)
            #expect(delegate.calls.filter { $0 == "redirect" }.count == 2)
        }
    }

    @Test(arguments: AnswerStyle.allCases)
    func challengeAnsweredWithACredential_isRetriedWithIt(style: AnswerStyle) async throws {
        try await withServer { server in
            let credential = URLCredential(user: "u", password: "p", persistence: .forSession)
            let delegate = LegacyDelegate(style: style, credential: credential)
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/auth/basic?user=u&password=p")).resume()
            await delegate.completed.wait()
            #expect(delegate.error == nil)
            #expect(delegate.calls.filter { $0 == "challenge" }.count == 1)
        }
    }

    @Test(arguments: AnswerStyle.allCases)
    func responseAnsweredWithCancel_deliversNoBodyAndCompletesCancelled(style: AnswerStyle) async throws {
        try await withServer { server in
            // Repeated: the body of a small response is usually in before the answer.
            for _ in 0..<10 {
                let delegate = LegacyDelegate(style: style, response: .cancel)
                URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                    .dataTask(with: server.url("/bytes/5000")).resume()
                await delegate.completed.wait()
                #expect(!delegate.calls.contains("data"), "calls: \(delegate.calls)")
                #expect((delegate.error as? URLError)?.code == .cancelled)
            }
        }
    }

    @Test(arguments: AnswerStyle.allCases)
    func responseAnsweredWithAllow_deliversTheWholeBody(style: AnswerStyle) async throws {
        try await withServer { server in
            let delegate = LegacyDelegate(style: style)
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/bytes/300000")).resume()
            await delegate.completed.wait()
            #expect(delegate.error == nil)
            #expect(delegate.body.count == 300_000)
        }
    }

    @Test(arguments: AnswerStyle.allCases)
    func responseAnsweredWithBecomeDownload_finishesAsADownload(style: AnswerStyle) async throws {
        try await withServer { server in
            let delegate = LegacyDelegate(style: style, response: .becomeDownload)
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/bytes/200000")).resume()
            await delegate.completed.wait()
            #expect(delegate.error == nil)
            #expect(delegate.downloaded?.count == 200_000)
            #expect(!delegate.calls.contains("data"))
            let calls = delegate.calls.filter { $0 != "write" }
            #expect(calls == ["create", "response", "becomeDownload", "finishDownloading", "metrics", "complete"], "\(calls)")
        }
    }

    @Test(arguments: AnswerStyle.allCases)
    func redirectAnsweredWithNil_makesTheRedirectTheResult(style: AnswerStyle) async throws {
        try await withServer { server in
            let delegate = StoppingRedirectDelegate(style: style)
            let result = HandlerResult<Data>()
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/redirect/1")) { result.set($0, $1, $2) }.resume()
            let (_, response, error) = await result.value()
            #expect(error == nil)
            #expect((response as? HTTPURLResponse)?.statusCode == 302)
        }
    }

    @Test func delegateQueueWithSeveralThreads_keepsEachTasksCallsInOrder() async throws {
        try await withServer { server in
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 4
            let delegates = (0..<8).map { _ in LegacyDelegate(style: .fromAnotherThread) }
            for delegate in delegates {
                URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: queue)
                    .dataTask(with: server.url("/redirect/1")).resume()
            }
            for delegate in delegates {
                await delegate.completed.wait()
                let calls = delegate.calls.filter { $0 != "data" }
                #expect(calls == ["create", "redirect", "response", "metrics", "complete"], "\(calls)")
            }
        }
    }
}

/// Answers every redirect with nil (stop), in one `AnswerStyle`.
final class StoppingRedirectDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    let style: AnswerStyle

    init(style: AnswerStyle) {
        self.style = style
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        style.answer { completionHandler(nil) }
    }
}
