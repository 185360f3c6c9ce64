import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import LoopbackServer
import Synchronization
import Testing

/// The configuration's swift-log `Logger`: a line per task start, hop,
/// response, decision and end, each with the task's request id, and never
/// a secret.
@Suite struct LoggingTests {
    /// Every record logged, rendered as one line of text with its metadata.
    final class Recorder: Sendable {
        struct Record: Sendable {
            let level: Logger.Level
            let message: String
            let metadata: [String: String]
            var text: String { "\(message) \(metadata.sorted { $0.key < $1.key })" }
        }

        private let records = Mutex<[Record]>([])
        var all: [Record] { records.withLock { $0 } }

        func logger(level: Logger.Level) -> Logger {
            var logger = Logger(label: "test") { _ in Handler(recorder: self) }
            logger.logLevel = level
            return logger
        }

        fileprivate func append(_ record: Record) { records.withLock { $0.append(record) } }
    }

    struct Handler: LogHandler {
        let recorder: Recorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var merged = metadata
            if let extra = event.metadata { merged.merge(extra) { $1 } }
            recorder.append(Recorder.Record(
                level: event.level, message: "\(event.message)",
                metadata: merged.mapValues { "\($0)" }))
        }
    }

    /// A session whose logger records into the returned recorder.
    private func loggingSession(
        level: Logger.Level, _ adjust: (inout SessionConfiguration) -> Void = { _ in }
    ) -> (Session, Recorder) {
        let recorder = Recorder()
        var configuration = testConfiguration()
        configuration.logger = recorder.logger(level: level)
        adjust(&configuration)
        return (Session(configuration: configuration), recorder)
    }

    @Test func traceLevel_logsStartHopsResponsesDecisionsAndEnd_withOneRequestID() async throws {
        try await withServer { server in
            let (session, recorder) = loggingSession(level: .trace)
            _ = try await session.data(from: server.url("/redirect/1"))
            let records = recorder.all
            #expect(records.map(\.message) == [
                "task started", "hop sent", "response", "decision", "decision", "hop sent", "response", "task finished",
            ])
            let ids = Set(records.compactMap { $0.metadata["request-id"] })
            #expect(ids.count == 1)
            #expect(records.first?.level == .debug)
            #expect(records.last?.level == .debug)
            #expect(records.filter { $0.message == "hop sent" }.map { $0.metadata["via"] } == ["network", "network"])
            #expect(records.contains { $0.metadata["decision"] == "redirect" && $0.metadata["detail"]?.hasPrefix("follow") == true })
        }
    }

    @Test func secrets_neverReachTheLog() async throws {
        try await withServer { server in
            let (session, recorder) = loggingSession(level: .trace) { configuration in
                configuration.httpAdditionalHeaders = ["X-Api-Key": "key-secret-1"]
                configuration.sensitiveHeaderNames = ["X-Api-Key"]
            }
            // A URL password, an Authorization header, a Set-Cookie, then that cookie sent back.
            var request = URLRequest(url: URL(string: "http://ann:url-secret-2@127.0.0.1:\(server.port)/cookies/set?sid=cookie-secret-3")!)
            request.setValue("Bearer token-secret-4", forHTTPHeaderField: "Authorization")
            _ = try await session.data(for: request)
            _ = try await session.data(from: server.url("/cookies/echo"))
            let text = recorder.all.map(\.text).joined(separator: "\n")
            #expect(recorder.all.count >= 8)
            for secret in ["key-secret-1", "url-secret-2", "token-secret-4"] {
                #expect(!text.contains(secret), "\(secret) was logged")
            }
            // The cookie's value is in the test's own URL query; no header shows it.
            #expect(!text.contains("Set-Cookie: sid"))
            #expect(!text.contains("Cookie: sid"))
            #expect(text.contains("Authorization: <redacted>"))
            #expect(text.contains("Set-Cookie: <redacted>"))
            #expect(text.contains("Cookie: <redacted>"))
            #expect(text.contains("X-Api-Key: <redacted>"))
        }
    }

    @Test func debugLevel_logsOnlyStartAndEnd_andAFailureSaysWhy() async throws {
        try await withServer { server in
            let (session, recorder) = loggingSession(level: .debug)
            _ = try? await session.data(from: server.url("/drop/1000?after=10"))
            let records = recorder.all
            #expect(records.map(\.message) == ["task started", "task failed"])
            #expect(records.last?.metadata["error"] == "\(URLError.Code.networkConnectionLost.rawValue)")
        }
    }

    @Test func noLogger_logsNothing_andTheTaskRuns() async throws {
        try await withServer { server in
            let configuration = testConfiguration()
            #expect(configuration.logger == nil)
            let (data, _) = try await Session(configuration: configuration).data(from: server.url("/bytes/5"))
            #expect(data.count == 5)
        }
    }
}
