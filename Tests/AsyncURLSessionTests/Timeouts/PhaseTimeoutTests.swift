import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Timeouts per phase: connecting has a limit of its own, and a stalled
/// upload ends as a stalled download does.
@Suite struct PhaseTimeoutTests {
    @Test func connectTimeout_endsAConnectThatHangs_beforeTheRequestTimeout() async throws {
        // Within 30 s: the request timeout (120 s) would not end it in time.
        try await withTimeLimit(30) {
            let listener = try SilentListener(filled: true)
            defer { listener.close() }
            var configuration = SessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 120
            configuration.timeoutIntervalForConnect = 0.5
            do {
                _ = try await Session(configuration: configuration)
                    .data(from: URL(string: "http://127.0.0.1:\(listener.port)/")!)
                Issue.record("a connect that hangs succeeded")
            } catch {
                #expect(error.urlErrorCode == .timedOut)
            }
        }
    }

    @Test func connectTimeout_isRetriedByARetryPolicy() async throws {
        try await withTimeLimit(20) {
            let listener = try SilentListener(filled: true)
            defer { listener.close() }
            var configuration = SessionConfiguration.ephemeral
            configuration.timeoutIntervalForConnect = 0.3
            configuration.retryPolicy = RetryPolicy(maximumAttempts: 2, initialBackoff: 0.01, jitter: 0)
            let task = Session(configuration: configuration)
                .dataTask(with: URL(string: "http://127.0.0.1:\(listener.port)/")!)
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error?.urlErrorCode == .timedOut)
            #expect(recorded.kinds.contains("retrying 2"))
            #expect(recorded.metrics?.transactionMetrics.count == 2)
        }
    }

    @Test func stalledUpload_endsAfterTheRequestTimeout() async throws {
        try await withTimeLimit(20) {
            // The server takes the connection and never reads: once the
            // socket buffers are full, no byte moves.
            let listener = try SilentListener()
            defer { listener.close() }
            var configuration = SessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 1
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(listener.port)/upload")!)
            request.httpMethod = "PUT"
            do {
                _ = try await Session(configuration: configuration)
                    .upload(for: request, from: Data(count: 64 << 20))
                Issue.record("an upload nobody reads succeeded")
            } catch {
                #expect(error.urlErrorCode == .timedOut)
            }
        }
    }
}
