import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// The classic adapter's retry policy, connect timeout and middleware
/// (issue 54), with completion handlers as legacy code calls them.
@Suite struct ResilienceClassicTests {
    struct Signer: RequestMiddleware {
        func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
            var request = request
            request.setValue("classic-signed", forHTTPHeaderField: "X-Signature")
            return .send(request)
        }
    }

    @Test func retryPolicy_retriesForACompletionHandler() async throws {
        try await withServer { server in
            let configuration = URLSessionConfiguration.ephemeral
            configuration.retryPolicy = RetryPolicy(initialBackoff: 0.01, jitter: 0)
            let result = await withCheckedContinuation { continuation in
                URLSession(configuration: configuration).dataTask(with: server.url("/flaky/classic?fail=1")) {
                    data, response, error in
                    continuation.resume(returning: (data, (response as? HTTPURLResponse)?.statusCode, error == nil))
                }.resume()
            }
            #expect(result.1 == 200)
            #expect(result.2)
            #expect(result.0.map { String(decoding: $0, as: UTF8.self) } == "ok after 2")
            #expect(server.flakyRequests("classic") == 2)
        }
    }

    @Test func middleware_signsForACompletionHandler() async throws {
        try await withServer { server in
            let configuration = URLSessionConfiguration.ephemeral
            configuration.middleware = [Signer()]
            let body = await withCheckedContinuation { continuation in
                URLSession(configuration: configuration).dataTask(with: server.url("/echo")) { data, _, _ in
                    continuation.resume(returning: data.map { String(decoding: $0, as: UTF8.self) } ?? "")
                }.resume()
            }
            #expect(body.contains("classic-signed"))
        }
    }

    @Test func retries_areTransactionsOfTheTasksMetrics() async throws {
        final class MetricsDelegate: NSObject, URLSessionTaskDelegate, Sendable {
            let transactions = Mutex(-1)
            func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
                transactions.withLock { $0 = metrics.transactionMetrics.count }
            }
        }
        try await withServer { server in
            let configuration = URLSessionConfiguration.ephemeral
            configuration.retryPolicy = RetryPolicy(initialBackoff: 0.01, jitter: 0)
            let delegate = MetricsDelegate()
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            let (data, _) = try await session.data(from: server.url("/flaky/metrics?fail=2"))
            #expect(String(decoding: data, as: UTF8.self) == "ok after 3")
            try await eventually { delegate.transactions.withLock { $0 } >= 3 }
            #expect(delegate.transactions.withLock { $0 } == 3)
        }
    }
}
