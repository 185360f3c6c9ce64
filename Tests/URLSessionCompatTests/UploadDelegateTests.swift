import Foundation
import Synchronization
import LoopbackServer
import Testing
import TestSupport
import URLSessionCompat

/// Uploads: `didSendBodyData` totals and `needNewBodyStream`.
@Suite struct UploadDelegateTests {
    @Test func uploadFromData_reportsSentBytesUpToTheTotal() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let body = LoopbackServer.patternBody(count: 1_000_000)
            var request = URLRequest(url: server.url("/echo-body"))
            request.httpMethod = "PUT"
            let task = session.uploadTask(with: request, from: body)
            task.resume()
            await delegate.completed.wait()
            let sent = delegate.sent
            #expect(sent.last?.1 == 1_000_000)
            #expect(sent.allSatisfy { $0.2 == 1_000_000 })
            #expect(sent.map(\.0).reduce(0, +) == 1_000_000)
            #expect(delegate.body(task) == body)
            #expect(folded(delegate.calls(task)).first == "send")
            session.invalidateAndCancel()
        }
    }

    /// A data task's `httpBody`, small enough to go out with the request
    /// head (sent from memory, no read callback): still reported, up to
    /// its total, before the response.
    @Test func dataTaskWithSmallHTTPBody_reportsSentBytesUpToTheTotal() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let body = LoopbackServer.patternBody(count: 5_000)
            var request = URLRequest(url: server.url("/echo-body"))
            request.httpMethod = "POST"
            request.httpBody = body
            let task = session.dataTask(with: request)
            task.resume()
            await delegate.completed.wait()
            let sent = delegate.sent
            #expect(sent.last?.1 == 5_000)
            #expect(sent.allSatisfy { $0.2 == 5_000 })
            #expect(sent.map(\.0).reduce(0, +) == 5_000)
            #expect(delegate.body(task) == body)
            #expect(folded(delegate.calls(task)).first == "send")
            session.invalidateAndCancel()
        }
    }

    @Test func streamedUpload_asksTheDelegateForItsStream() async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 200_000)
            let delegate = RecordingDelegate(bodyStream: { InputStream(data: body) })
            let session = makeSession(delegate)
            let task = session.uploadTask(withStreamedRequest: URLRequest(url: server.url("/echo-body")))
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.calls(task).first == "needNewBodyStream")
            #expect(delegate.body(task) == body)
            session.invalidateAndCancel()
        }
    }

    @Test func streamedUpload_withoutTheMethod_usesTheRequestsStream() async throws {
        try await withServer { server in
            let delegate = CompletionOnlyDelegate()
            let session = makeSession(delegate)
            var request = URLRequest(url: server.url("/echo-body"))
            request.httpBodyStream = InputStream(data: LoopbackServer.patternBody(count: 50_000))
            let task = session.uploadTask(withStreamedRequest: request)
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.errors == [nil])
            #expect(task.countOfBytesSent == 50_000)
            #expect((task.response as? HTTPURLResponse)?.statusCode == 200)
            session.invalidateAndCancel()
        }
    }

    /// Legacy code's shape of the engine hang fixed in round four
    /// (`UploadTests.responseAllowedLate_whileTheBodyStreamIsOpen_endsTheTaskAtOnce`):
    /// a streamed upload with a Content-Length, whose delegate answers the
    /// response from another thread a moment later, after the server has
    /// answered. The adapter keeps the body while its delegate decides
    /// rather than pausing the transfer, so it never reached the hang (this
    /// passed with the engine's fix undone); it checks that it still
    /// completes at once.
    @Test func streamedUpload_responseAllowedLateFromAnotherThread_completesAtOnce() async throws {
        final class LateAllowing: NSObject, URLSessionDataDelegate, Sendable {
            let body: Data
            let completed = Signal()
            let outcome = Mutex<(received: Data, error: (any Error)?)>((Data(), nil))
            init(body: Data) { self.body = body }

            func urlSession(
                _ session: URLSession, task: URLSessionTask,
                needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
            ) {
                completionHandler(InputStream(data: body))
            }
            func urlSession(
                _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
            ) {
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { completionHandler(.allow) }
            }
            func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
                outcome.withLock { $0.received.append(data) }
            }
            func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
                outcome.withLock { $0.error = error }
                completed.fire()
            }
        }
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 10_000)
            let delegate = LateAllowing(body: body)
            let session = makeSession(delegate) { $0.timeoutIntervalForRequest = 120 }
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "POST"
            request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
            session.uploadTask(withStreamedRequest: request).resume()
            try await withTimeLimit(30) { await delegate.completed.wait() }
            let (received, error) = delegate.outcome.withLock { ($0.received, $0.error) }
            #expect(error == nil, "\(String(describing: error))")
            #expect(String(decoding: received, as: UTF8.self).contains("\"bodyLength\":10000"), "\(String(decoding: received, as: UTF8.self))")
            session.finishTasksAndInvalidate()
        }
    }
}
