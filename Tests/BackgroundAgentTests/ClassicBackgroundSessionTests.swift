import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat
#if canImport(Glibc)
import Glibc
#endif

/// Background sessions through the classic API, written as legacy code
/// writes them: `URLSessionConfiguration.background(withIdentifier:)`, a
/// download delegate, sessions made inline and never stored.
@Suite struct ClassicBackgroundSessionTests {
    /// What a delegate heard, in order.
    final class Recorder: NSObject, URLSessionDownloadDelegate, Sendable {
        enum Call: Equatable {
            case wrote(Int64)
            case finished(task: Int, bytes: Data)
            case completed(task: Int, code: Int?)
            case finishedEvents
        }

        private let calls = Mutex<[Call]>([])
        private let signal = DispatchSemaphore(value: 0)
        var all: [Call] { calls.withLock { $0 } }

        private func record(_ call: Call) {
            calls.withLock { $0.append(call) }
            signal.signal()
        }

        /// Waits (on a thread of its own) until `done` holds, at most `seconds`.
        func wait(seconds: Double, until done: @escaping @Sendable ([Call]) -> Bool) async -> [Call] {
            await withCheckedContinuation { continuation in
                Thread { [self] in
                    let deadline = Date().addingTimeInterval(seconds * testTimeScale)
                    while !done(all), Date() < deadline { _ = signal.wait(timeout: .now() + 0.1) }
                    continuation.resume(returning: all)
                }.start()
            }
        }

        func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
            record(.finished(task: downloadTask.taskIdentifier, bytes: (try? Data(contentsOf: location)) ?? Data()))
        }

        func urlSession(
            _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
            totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
        ) {
            record(.wrote(totalBytesWritten))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            record(.completed(task: task.taskIdentifier, code: (error as? URLError)?.code.rawValue))
        }

        func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
            record(.finishedEvents)
        }
    }

    private static func configuration(_ identifier: String, _ sandbox: AgentSandbox) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
        configuration.sessionConfiguration = sandbox.configuration(identifier)
        return configuration
    }

    @Test func aCompletionHandlerTask_inABackgroundSession_failsThroughItsHandler_sayingWhy() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let session = URLSession(
                configuration: Self.configuration("handlers", sandbox), delegate: Recorder(), delegateQueue: nil)
            let failure = Mutex<(any Error)?>(nil)
            let done = DispatchSemaphore(value: 0)
            session.downloadTask(with: server.url("/bytes/10")) { location, _, error in
                #expect(location == nil)
                failure.withLock { $0 = error }
                done.signal()
            }.resume()
            let finished = await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: done.wait(timeout: .now() + 30) == .success) }.start()
            }
            #expect(finished)
            let message = failure.withLock { ($0 as? URLError)?.localizedDescription } ?? ""
            #expect(message.contains("Completion handlers are not supported in background sessions"))
            #expect(server.acceptedConnections == 0)
            session.invalidateAndCancel()
        }
    }

    @Test func aClassicBackgroundDownload_reachesItsDelegate() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let recorder = Recorder()
            let configuration = Self.configuration("classic", sandbox)
            #expect(configuration.identifier == "classic")
            URLSession(configuration: configuration, delegate: recorder, delegateQueue: nil)
                .downloadTask(with: server.url("/range/2000000")).resume()
            let calls = await recorder.wait(seconds: 30) { $0.contains { if case .completed = $0 { true } else { false } } }
            #expect(calls.contains(.finished(task: 1, bytes: LoopbackServer.patternBody(count: 2_000_000))), "\(calls.count) calls")
            #expect(calls.last == .completed(task: 1, code: nil))
            #expect(calls.contains(.wrote(2_000_000)))
            // Nothing waited for this program: no finishEvents call.
            #expect(!calls.contains(.finishedEvents))
        }
    }

    /// A killed program's download (and agent) as in the core's test; a
    /// legacy program with that identifier hears the file and the end
    /// under the task's old identifier, then `urlSessionDidFinishEvents`.
    @Test func aKilledProgramsDownload_reachesTheNextProgramsDelegate_thenFinishEvents() async throws {
        try await withServer(timeLimit: 120) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            _ = try await BackgroundSessionTests.startThenKillProgramAndAgent(sandbox, server, session: "legacy")
            let ended = try await sandbox.waitForStatus { $0.first?.contains("finished") ?? false }
            try #require(ended.lines.first?.contains("finished") == true, "\(ended.lines)")
            let recorder = Recorder()
            _ = URLSession(configuration: Self.configuration("legacy", sandbox), delegate: recorder, delegateQueue: nil)
            let calls = await recorder.wait(seconds: 30) { $0.contains(.finishedEvents) }
            // fetch's task was its session's first.
            let ends = calls.filter { if case .wrote = $0 { false } else { true } }
            #expect(ends == [
                .finished(task: 1, bytes: LoopbackServer.patternBody(count: 3_000_000)), .completed(task: 1, code: nil),
                .finishedEvents,
            ], "\(ends.map { "\($0)".prefix(60) })")
        }
    }
}
