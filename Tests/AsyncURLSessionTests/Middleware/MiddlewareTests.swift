import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Synchronization
import Testing

/// Middleware as users write it: structs and classes that sign requests,
/// answer them, refresh a token on 401, on sessions made inline.
@Suite struct MiddlewareTests {
    struct Signer: RequestMiddleware {
        func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
            var request = request
            request.setValue("sig-\(attempt.number)", forHTTPHeaderField: "X-Signature")
            return .send(request)
        }
    }

    /// Records the URLs it prepared.
    final class Recorder: RequestMiddleware, Sendable {
        let level: MiddlewareLevel
        let prepared = Mutex<[String]>([])
        let inspected = Mutex<[Int]>([])
        init(level: MiddlewareLevel = .attempt) { self.level = level }
        func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
            prepared.withLock { $0.append(request.url?.path ?? "") }
            return .send(request)
        }
        func inspect(_ response: HTTPURLResponse, request: URLRequest, attempt: MiddlewareAttempt) async throws
            -> MiddlewareResponseStep
        {
            inspected.withLock { $0.append(response.statusCode) }
            return .accept
        }
    }

    /// Sends a token; on a 401 refreshes it once and asks again.
    final class TokenRefresher: RequestMiddleware, Sendable {
        let token = Mutex("wrong")
        let refreshes = Mutex(0)
        func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
            var request = request
            let credentials = Data("user:\(token.withLock { $0 })".utf8).base64EncodedString()
            request.setValue("Basic \(credentials)", forHTTPHeaderField: "Authorization")
            return .send(request)
        }
        func inspect(_ response: HTTPURLResponse, request: URLRequest, attempt: MiddlewareAttempt) async throws
            -> MiddlewareResponseStep
        {
            guard response.statusCode == 401, refreshes.withLock({ $0 }) == 0 else { return .accept }
            refreshes.withLock { $0 += 1 }
            token.withLock { $0 = "secret" }
            return .retry(request)
        }
    }

    private static func session(_ middleware: [any RequestMiddleware]) -> Session {
        var configuration = testConfiguration()
        configuration.middleware = middleware
        return Session(configuration: configuration)
    }

    @Test func prepare_signsTheRequestOnTheWire() async throws {
        try await withServer { server in
            let (data, _) = try await Self.session([Signer()]).data(from: server.url("/echo"))
            #expect(String(decoding: data, as: UTF8.self).contains("sig-1"))
        }
    }

    @Test func respond_answersWithoutTheNetwork() async throws {
        struct Canned: RequestMiddleware {
            func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
                let response = HTTPURLResponse(
                    url: request.url!, statusCode: 201, httpVersion: "HTTP/1.1", headerFields: ["X-Canned": "yes"])!
                return .respond(response, body: Data("canned".utf8))
            }
        }
        try await withServer { server in
            let (data, response) = try await Self.session([Canned()]).data(from: server.url("/flaky/canned?fail=0"))
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == 201)
            #expect(http.value(forHTTPHeaderField: "X-Canned") == "yes")
            #expect(String(decoding: data, as: UTF8.self) == "canned")
            #expect(server.flakyRequests("canned") == 0)
        }
    }

    @Test func a401_isRefreshedOnce_andNotLooped() async throws {
        try await withServer { server in
            let refresher = TokenRefresher()
            let (data, response) = try await Self.session([refresher])
                .data(from: server.url("/auth/basic?user=user&password=secret"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "authenticated as user")
            #expect(refresher.refreshes.withLock { $0 } == 1)
            #expect(server.authorizationAttempts == 2)
        }
    }

    @Test func aMiddlewareThatAlwaysRetries_isStopped() async throws {
        struct Insistent: RequestMiddleware {
            func inspect(_ response: HTTPURLResponse, request: URLRequest, attempt: MiddlewareAttempt) async throws
                -> MiddlewareResponseStep
            {
                .retry(request)
            }
        }
        try await withServer { server in
            do {
                _ = try await Self.session([Insistent()]).data(from: server.url("/flaky/loop?fail=-1"))
                Issue.record("an endless retry succeeded")
            } catch {
                #expect(error.urlErrorCode == .cannotLoadFromNetwork)
            }
            #expect(server.flakyRequests("loop") == 17)
        }
    }

    @Test func aThrownError_endsTheTask_asTheUnderlyingError() async throws {
        struct Refusal: Error, Equatable { let reason: String }
        struct Refuser: RequestMiddleware {
            func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
                throw Refusal(reason: "no token")
            }
        }
        try await withServer { server in
            do {
                _ = try await Self.session([Refuser()]).data(from: server.url("/flaky/refused?fail=0"))
                Issue.record("the request went")
            } catch let error as URLError {
                let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError
                #expect(underlying != nil)
                #expect(error.localizedDescription.contains("no token"))
                #expect(error.userInfo[NSURLErrorFailingURLErrorKey] != nil)
            }
            #expect(server.flakyRequests("refused") == 0)
        }
    }

    @Test func cancel_reachesAWaitingMiddleware() async throws {
        final class Slow: RequestMiddleware, Sendable {
            let sawCancellation = Mutex(false)
            let started = Mutex(false)
            func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
                started.withLock { $0 = true }
                do {
                    try await Task.sleep(for: .seconds(60))
                } catch {
                    sawCancellation.withLock { $0 = true }
                    throw error
                }
                return .send(request)
            }
        }
        try await withServer(timeLimit: 15) { server in
            let slow = Slow()
            let task = Self.session([slow]).dataTask(with: server.url("/bytes/10"))
            task.resume()
            try await eventually { slow.started.withLock { $0 } }
            task.cancel()
            let recorded = await record(task)
            #expect(recorded.error?.urlErrorCode == .cancelled)
            try await eventually { slow.sawCancellation.withLock { $0 } }
            #expect(slow.sawCancellation.withLock { $0 })
        }
    }

    @Test func levels_attemptSeesEveryRedirect_taskSeesTheFirstRequest() async throws {
        try await withServer { server in
            let attempts = Recorder(level: .attempt)
            let task = Recorder(level: .task)
            let (data, _) = try await Self.session([task, attempts]).data(from: server.url("/redirect/2"))
            #expect(!data.isEmpty)
            #expect(attempts.prepared.withLock { $0 }.count == 3)
            #expect(task.prepared.withLock { $0 } == ["/redirect/2"])
            #expect(task.inspected.withLock { $0 } == [200])
            #expect(attempts.inspected.withLock { $0 } == [200])
        }
    }

    @Test func taskMiddleware_runsInsideTheSessions() async throws {
        struct Stamp: RequestMiddleware {
            let name: String
            func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
                var request = request
                let before = request.value(forHTTPHeaderField: "X-Order").map { $0 + "," } ?? ""
                request.setValue(before + name, forHTTPHeaderField: "X-Order")
                return .send(request)
            }
        }
        try await withServer { server in
            let task = Self.session([Stamp(name: "session")]).dataTask(with: server.url("/echo"))
            task.middleware = [Stamp(name: "task")]
            task.resume()
            let recorded = await record(task)
            #expect(String(decoding: recorded.body, as: UTF8.self).contains("session,task"))
        }
    }

    @Test func events_seeOnlyTheAcceptedResponse_andItsWholeBody() async throws {
        try await withServer { server in
            let refresher = TokenRefresher()
            let task = Self.session([refresher]).dataTask(with: server.url("/auth/basic?user=user&password=secret"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.kinds.filter { $0 == "response" }.count == 1)
            #expect(recorded.response?.statusCode == 200)
            #expect(String(decoding: recorded.body, as: UTF8.self) == "authenticated as user")
        }
    }

    @Test func passThrough_deliversALargeBodyWhole() async throws {
        try await withServer { server in
            let (data, _) = try await Self.session([Recorder()]).data(from: server.url("/bytes/3000000"))
            #expect(data == LoopbackServer.patternBody(count: 3_000_000))
        }
    }

    /// A middleware that answers late, from another thread (a token fetched
    /// by a callback API): the request waits for it and goes signed.
    @Test func anAnswerGivenLateFromAnotherThread_isWaitedFor() async throws {
        struct CallbackSigner: RequestMiddleware {
            func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
                let token = await withCheckedContinuation { continuation in
                    DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { continuation.resume(returning: "late-token") }
                }
                var request = request
                request.setValue(token, forHTTPHeaderField: "X-Token")
                return .send(request)
            }
        }
        try await withServer { server in
            let (data, _) = try await Self.session([CallbackSigner()]).data(from: server.url("/echo"))
            #expect(String(decoding: data, as: UTF8.self).contains("late-token"))
        }
    }
}
