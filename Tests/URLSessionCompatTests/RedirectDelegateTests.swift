import Foundation
import LoopbackServer
import Testing
import TestSupport
import URLSessionCompat

/// `willPerformHTTPRedirection`: follow, modify, stop.
@Suite struct RedirectDelegateTests {
    @Test func answeringTheProposedRequest_followsIt() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/redirect/2"))
            task.resume()
            await delegate.completed.wait()
            #expect(folded(delegate.calls(task)) == ["redirect 302", "redirect 302", "response", "data", "metrics", "complete"])
            #expect(String(decoding: delegate.body(task), as: UTF8.self) == "done")
            #expect(task.currentRequest?.url != task.originalRequest?.url)
            session.invalidateAndCancel()
        }
    }

    @Test func answeringAnotherRequest_followsThatOne() async throws {
        try await withServer { server in
            let other = server.url("/bytes/7")
            let delegate = RecordingDelegate(redirect: { _, _ in URLRequest(url: other) })
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/redirect/1"))
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.body(task) == LoopbackServer.patternBody(count: 7))
            #expect(task.currentRequest?.url == other)
            session.invalidateAndCancel()
        }
    }

    @Test func answeringNil_makesTheRedirectResponseTheResult() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate(redirect: { _, _ in nil })
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/redirect/1"))
            task.resume()
            await delegate.completed.wait()
            #expect((task.response as? HTTPURLResponse)?.statusCode == 302)
            #expect(folded(delegate.calls(task)) == ["redirect 302", "response", "data", "metrics", "complete"]
                || folded(delegate.calls(task)) == ["redirect 302", "response", "metrics", "complete"])
            #expect(delegate.error(task) == nil)
            session.invalidateAndCancel()
        }
    }

    @Test func notImplemented_followsUpToTheLimit() async throws {
        try await withServer { server in
            let delegate = CompletionOnlyDelegate()
            let session = makeSession(delegate) { $0.httpMaximumRedirects = 3 }
            session.dataTask(with: server.url("/redirect-loop")).resume()
            await delegate.completed.wait()
            #expect(delegate.errors == [.httpTooManyRedirects])
            session.invalidateAndCancel()
        }
    }
}

/// The classic adapter follows redirects as FoundationNetworking does (its
/// own test suite checks these), where the async core keeps RFC 9110's rules.
@Suite struct FoundationNetworkingRedirectRuleTests {
    private func load(_ request: URLRequest) async -> (Data?, URLResponse?, (any Error)?) {
        await withCheckedContinuation { continuation in
            URLSession(configuration: .ephemeral).dataTask(with: request) { data, response, error in
                continuation.resume(returning: (data, response, error))
            }.resume()
        }
    }

    @Test func head_redirectedBy303_becomesGET() async throws {
        try await withServer { server in
            var request = URLRequest(url: server.url("/redirect-to?status=303&location=/echo"))
            request.httpMethod = "HEAD"
            let (data, response, error) = await load(request)
            #expect(error == nil)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data ?? Data(), as: UTF8.self).contains("\"method\":\"GET\""))
        }
    }

    @Test(arguments: [305, 306])
    func status305And306_areFollowed_keepingTheMethod(status: Int) async throws {
        try await withServer { server in
            var request = URLRequest(url: server.url("/redirect-to?status=\(status)&location=/echo"))
            request.httpMethod = "PUT"
            let (data, response, error) = await load(request)
            #expect(error == nil)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data ?? Data(), as: UTF8.self).contains("\"method\":\"PUT\""))
        }
    }
}
