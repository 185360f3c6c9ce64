import Foundation
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
}
