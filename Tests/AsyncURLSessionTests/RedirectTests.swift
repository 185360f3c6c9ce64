import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

@Suite struct RedirectTests {
    @Test func redirects_areFollowedByDefault_eachOneAnEvent() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/redirect/3"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.kinds == ["redirect", "redirect", "redirect", "response", "data", "metrics"])
            #expect(recorded.response?.statusCode == 200)
            #expect(String(decoding: recorded.body, as: UTF8.self) == "done")
            #expect(task.currentRequest?.url?.path == "/redirect/0")
            #expect(task.originalRequest?.url?.path == "/redirect/3")
            #expect(recorded.metrics?.redirectCount == 3)
            #expect(recorded.metrics?.transactionMetrics.count == 4)
        }
    }

    @Test func dataFor_followsRedirects() async throws {
        try await withServer { server in
            let (data, response) = try await Session(configuration: testConfiguration())
                .data(from: server.url("/redirect/2"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(response.url?.path == "/redirect/0")
            #expect(String(decoding: data, as: UTF8.self) == "done")
        }
    }

    @Test func answeringStop_makesTheRedirectResponseAndItsBodyTheResult() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/redirect-to?status=302&location=/bytes/10"))
            task.resume()
            var kinds: [String] = []
            var body = Data()
            var status = 0
            for try await event in task.events {
                switch event {
                case .redirect(let decision):
                    kinds.append("redirect")
                    #expect(decision.proposedRequest.url?.path == "/bytes/10")
                    decision.stop()
                case .response(let response, _):
                    kinds.append("response")
                    status = response.statusCode
                case .data(let chunk): body.append(chunk)
                default: break
                }
            }
            #expect(kinds == ["redirect", "response"])
            #expect(status == 302)
            #expect(String(decoding: body, as: UTF8.self) == "redirecting")
        }
    }

    @Test func answeringWithAnotherRequest_followsThatRequest() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/redirect-to?status=302&location=/bytes/10"))
            task.resume()
            var body = Data()
            for try await event in task.events {
                switch event {
                case .redirect(let decision): decision.follow(URLRequest(url: server.url("/bytes/7")))
                case .data(let chunk): body.append(chunk)
                default: break
                }
            }
            #expect(body == LoopbackServer.patternBody(count: 7))
            #expect(task.currentRequest?.url?.path == "/bytes/7")
        }
    }

    @Test func relativeLocation_resolvesAgainstTheCurrentURL() async throws {
        try await withServer { server in
            let (data, response) = try await Session(configuration: testConfiguration())
                .data(from: server.url("/redirect-to?status=301&location=bytes/5"))
            #expect(response.url?.path == "/bytes/5")
            #expect(data == LoopbackServer.patternBody(count: 5))
        }
    }

    @Test func redirectLoop_failsWithTooManyRedirects() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.httpMaximumRedirects = 5
            await #expect(throws: URLError.self) {
                do {
                    _ = try await Session(configuration: configuration).data(from: server.url("/redirect-loop"))
                } catch {
                    #expect(error.urlErrorCode == .httpTooManyRedirects)
                    throw error
                }
            }
        }
    }

    @Test(arguments: ["ftp://127.0.0.1/x", "file:///etc/passwd", "javascript:alert(1)"])
    func locationWithAnotherScheme_isNotFollowed(location: String) async throws {
        try await withServer { server in
            let encoded = location.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? location
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/redirect-to?status=302&location=\(encoded)"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.kinds == ["response", "data", "metrics"])
            #expect(recorded.response?.statusCode == 302)
        }
    }

    @Test func threeHundredWithoutLocation_isTheResult() async throws {
        try await withServer { server in
            let (_, response) = try await Session(configuration: testConfiguration()).data(from: server.url("/status/302"))
            #expect((response as? HTTPURLResponse)?.statusCode == 302)
        }
    }

    @Test(arguments: [(301, "POST", "GET", 0), (302, "POST", "GET", 0), (303, "POST", "GET", 0), (303, "PUT", "GET", 0),
                      (307, "POST", "POST", 1000), (308, "PUT", "PUT", 1000), (301, "PUT", "PUT", 1000)])
    func method_isRewrittenAsBrowsersDo(status: Int, method: String, expectedMethod: String, expectedBody: Int) async throws {
        try await withServer { server in
            var request = URLRequest(url: server.url("/redirect-to?status=\(status)&location=/echo"))
            request.httpMethod = method
            request.httpBody = Data(repeating: 1, count: 1000)
            let (data, _) = try await Session(configuration: testConfiguration()).data(for: request)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.method == expectedMethod)
            #expect(echo.bodyLength == expectedBody)
        }
    }

    /// The core keeps RFC 9110's rules (the classic adapter follows
    /// FoundationNetworking's): 305 and 306 are results, HEAD stays HEAD.
    @Test func status305_isTheResult_andHEADStaysHEADOn303() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let (_, response) = try await session.data(from: server.url("/redirect-to?status=305&location=/echo"))
            #expect((response as? HTTPURLResponse)?.statusCode == 305)
            var head = URLRequest(url: server.url("/redirect-to?status=303&location=/echo"))
            head.httpMethod = "HEAD"
            let (data, headResponse) = try await session.data(for: head)
            #expect((headResponse as? HTTPURLResponse)?.statusCode == 200)
            #expect(data.isEmpty)
        }
    }

    @Test func crossOriginRedirect_dropsCredentialsAndCookies() async throws {
        try await withServer { first in
            let second = try await LoopbackServer.start()
            defer { Task { try? await second.shutdown() } }
            let target = second.url("/echo").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            var request = URLRequest(url: first.url("/redirect-to?status=302&location=\(target)"))
            request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
            request.setValue("session=secret", forHTTPHeaderField: "Cookie")
            request.setValue("kept", forHTTPHeaderField: "X-Other")
            let (data, _) = try await Session(configuration: testConfiguration()).data(for: request)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.value(of: "authorization") == nil)
            #expect(echo.value(of: "cookie") == nil)
            #expect(echo.value(of: "x-other") == "kept")
        }
    }

    /// Hostile-server finding: the session's own Authorization reached the
    /// other origin (it was added to every hop).
    @Test func crossOriginRedirect_dropsTheSessionsSensitiveHeaders() async throws {
        try await withServer { first in
            let second = try await LoopbackServer.start()
            defer { Task { try? await second.shutdown() } }
            var configuration = testConfiguration()
            configuration.httpAdditionalHeaders = [
                "Authorization": "Bearer session-secret", "Cookie": "s=1", "X-Api-Key": "key", "X-Plain": "kept",
            ]
            configuration.sensitiveHeaderNames.insert("X-API-KEY")
            let url = first.url("/cross-origin-redirect?port=\(second.port)")
            let (data, _) = try await Session(configuration: configuration).data(from: url)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.value(of: "authorization") == nil)
            #expect(echo.value(of: "cookie") == nil)
            #expect(echo.value(of: "x-api-key") == nil)
            #expect(echo.value(of: "x-plain") == "kept")
        }
    }

    @Test func sameOriginRedirect_keepsTheSessionsAuthorization() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.httpAdditionalHeaders = ["Authorization": "Bearer session-secret"]
            let url = server.url("/redirect-to?status=302&location=/echo")
            let (data, _) = try await Session(configuration: configuration).data(from: url)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.value(of: "authorization") == "Bearer session-secret")
        }
    }

    @Test func requestHeaderMarkedSensitive_doesNotCrossOrigins() async throws {
        try await withServer { first in
            let second = try await LoopbackServer.start()
            defer { Task { try? await second.shutdown() } }
            var configuration = testConfiguration()
            configuration.sensitiveHeaderNames = ["X-Token"]
            #expect(configuration.sensitiveHeaderNames.contains("authorization"), "the defaults stay")
            var request = URLRequest(url: first.url("/cross-origin-redirect?port=\(second.port)"))
            request.setValue("t", forHTTPHeaderField: "X-Token")
            let (data, _) = try await Session(configuration: configuration).data(for: request)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.value(of: "x-token") == nil)
        }
    }

    @Test func sameOriginRedirect_keepsAuthorization() async throws {
        try await withServer { server in
            var request = URLRequest(url: server.url("/redirect-to?status=302&location=/echo"))
            request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
            let (data, _) = try await Session(configuration: testConfiguration()).data(for: request)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.value(of: "authorization") == "Bearer secret")
        }
    }

    @Test func httpsToHTTPRedirect_isNotFollowedByDefault() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { secure in
            let plain = try await LoopbackServer.start()
            defer { Task { try? await plain.shutdown() } }
            let target = plain.url("/echo").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let url = secure.url("/redirect-to?status=302&location=\(target)")
            let (_, response) = try await Session(configuration: testConfiguration(trusting: secure)).data(from: url)
            #expect((response as? HTTPURLResponse)?.statusCode == 302)
            #expect(plain.acceptedConnections == 0)

            var allowing = testConfiguration(trusting: secure)
            allowing.followsInsecureRedirects = true
            let (_, followed) = try await Session(configuration: allowing).data(from: url)
            #expect((followed as? HTTPURLResponse)?.statusCode == 200)
        }
    }

    @Test func taskDelegate_answersWithoutIteratingEvents() async throws {
        final class StopRedirects: SessionTaskDelegate {
            func task(_ task: SessionTask, willPerformRedirection decision: RedirectDecision) async {
                decision.stop()
            }
        }
        try await withServer { server in
            let (data, response) = try await Session(configuration: testConfiguration())
                .data(from: server.url("/redirect-to?status=307&location=/bytes/10"), delegate: StopRedirects())
            #expect((response as? HTTPURLResponse)?.statusCode == 307)
            #expect(String(decoding: data, as: UTF8.self) == "redirecting")
        }
    }

    @Test func sessionDelegate_answersWhenTheTaskHasNone() async throws {
        final class RewriteRedirects: SessionTaskDelegate {
            let target: URL
            init(target: URL) { self.target = target }
            func task(_ task: SessionTask, willPerformRedirection decision: RedirectDecision) async {
                decision.follow(URLRequest(url: target))
            }
        }
        try await withServer { server in
            let session = Session(configuration: testConfiguration(), delegate: RewriteRedirects(target: server.url("/bytes/3")))
            let (data, _) = try await session.data(from: server.url("/redirect/1"))
            #expect(data == LoopbackServer.patternBody(count: 3))
        }
    }

    @Test func cancellingWhileARedirectDecisionWaits_endsWithCancelled() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/redirect/1"))
            task.resume()
            var iterator = task.events.makeAsyncIterator()
            guard case .redirect(let decision) = try await iterator.next() else {
                Issue.record("expected a redirect first"); return
            }
            task.cancel()
            #expect(task.state == .completed)
            _ = decision
            // The hops so far still report their metrics, just before the end.
            guard case .metrics(let metrics)? = try await iterator.next() else {
                Issue.record("expected the metrics before the end"); return
            }
            #expect(metrics.transactionMetrics.count == 1)
            await #expect(throws: URLError.self) { _ = try await iterator.next() }
        }
    }
}
