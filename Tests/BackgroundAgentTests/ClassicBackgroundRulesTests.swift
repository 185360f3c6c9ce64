import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// Issue 44 item 7 through the classic API: a redirected background
/// download's `response` and `currentRequest` name where the redirects
/// ended; a background upload reaches `didSendBodyData`.
@Suite struct ClassicBackgroundRulesTests {
    @Test func aClassicRedirectedDownload_hasTheResponseOfWhereTheRedirectsEnded() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let recorder = ClassicRecorder()
            let task = URLSession(configuration: Self.classic("classic-moved", sandbox), delegate: recorder, delegateQueue: nil)
                .downloadTask(with: server.url("/redirect/3"))
            task.resume()
            let ended = await recorder.waitForCompletion(seconds: 30)
            #expect(ended == .some(nil))
            #expect(task.response?.url == server.url("/redirect/0"))
            #expect(task.currentRequest?.url == server.url("/redirect/0"))
            #expect(task.originalRequest?.url == server.url("/redirect/3"))
        }
    }

    @Test func aClassicUploadFromAFile_reachesDidSendBodyData() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let body = sandbox.runtime.appendingPathComponent("upload.bin")
            try LoopbackServer.patternBody(count: 2_500_000).write(to: body)
            let recorder = ClassicRecorder()
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "PUT"
            URLSession(configuration: Self.classic("classic-sends", sandbox), delegate: recorder, delegateQueue: nil)
                .uploadTask(with: request, fromFile: body).resume()
            let ended = await recorder.waitForCompletion(seconds: 30)
            #expect(ended == .some(nil))
            let sent = recorder.sent
            #expect(sent.last?.total == 2_500_000, "\(sent)")
            #expect(sent.last?.expected == 2_500_000, "\(sent)")
        }
    }

    static func classic(_ identifier: String, _ sandbox: AgentSandbox) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
        configuration.sessionConfiguration = sandbox.configuration(identifier)
        return configuration
    }

    /// What a classic delegate heard: bytes sent, and the end.
    final class ClassicRecorder: NSObject, URLSessionDownloadDelegate, Sendable {
        private let state = Mutex((sent: [(total: Int64, expected: Int64)](), end: URLError??.none))
        private let signal = DispatchSemaphore(value: 0)

        var sent: [(total: Int64, expected: Int64)] { state.withLock { $0.sent } }

        /// The task's error (`.some(nil)`: none) once it completed; nil if it did not within `seconds`.
        func waitForCompletion(seconds: Double) async -> URLError?? {
            await withCheckedContinuation { continuation in
                Thread { [self] in
                    let deadline = Date().addingTimeInterval(seconds * testTimeScale)
                    while state.withLock({ $0.end == nil }), Date() < deadline { _ = signal.wait(timeout: .now() + 0.1) }
                    continuation.resume(returning: state.withLock { $0.end })
                }.start()
            }
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
            totalBytesExpectedToSend: Int64
        ) {
            state.withLock { $0.sent.append((totalBytesSent, totalBytesExpectedToSend)) }
        }

        func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {}

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            state.withLock { $0.end = .some(error.map { ($0 as? URLError) ?? URLError(.unknown) }) }
            signal.signal()
        }
    }
}
