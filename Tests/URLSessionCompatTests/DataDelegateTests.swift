import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// Legacy delegate-driven data tasks, as SPEC §3 orders their calls.
@Suite struct DataDelegateTests {
    @Test func newTask_isSuspendedUntilResumed() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/bytes/10"))
            #expect(task.state == .suspended)
            #expect(server.acceptedConnections == 0)
            task.resume()
            await delegate.completed.wait()
            #expect(task.state == .completed)
            session.invalidateAndCancel()
        }
    }

    @Test func dataTask_callsResponseDataMetricsComplete_inOrder() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/bytes/100000"))
            task.resume()
            await delegate.completed.wait()
            #expect(folded(delegate.calls(task)) == ["response", "data", "metrics", "complete"])
            #expect(delegate.error(task) == nil)
            session.invalidateAndCancel()
        }
    }

    /// Each call goes to the task's own delegate when it implements the
    /// method, else to the session's: a task delegate that only takes the
    /// body leaves the response and the end to the session's delegate.
    @Test func taskDelegateWithoutAMethod_leavesItToTheSessionDelegate() async throws {
        try await withServer { server in
            let sessionDelegate = RecordingDelegate()
            let session = makeSession(sessionDelegate)
            let task = session.dataTask(with: server.url("/bytes/100000"))
            let bodyOnly = BodyOnlyDelegate()
            task.delegate = bodyOnly
            task.resume()
            await sessionDelegate.completed.wait()
            #expect(folded(sessionDelegate.calls(task)) == ["response", "metrics", "complete"])
            #expect(bodyOnly.body == LoopbackServer.patternBody(count: 100_000))
            #expect(sessionDelegate.error(task) == nil)
            session.invalidateAndCancel()
        }
    }

    @Test func receivedDataChunks_concatenateToTheBody() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/chunked/3000000"))
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.body(task) == LoopbackServer.patternBody(count: 3_000_000))
            #expect(delegate.calls(task).filter { $0 == "data" }.count > 1)
            session.invalidateAndCancel()
        }
    }

    @Test func multipartReplace_eachPartStartsWithAResponse() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/multipart-replace?parts=3&size=1000&interval=20"))
            task.resume()
            await delegate.completed.wait()
            #expect(folded(delegate.calls(task)) == [
                "response", "data", "response", "data", "response", "data", "metrics", "complete",
            ])
            session.invalidateAndCancel()
        }
    }

    @Test func callsForOneTask_neverOverlap_onAConcurrentQueue() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 8
            let session = makeSession(delegate, queue: queue)
            let tasks = (0..<4).map { _ in session.dataTask(with: server.url("/chunked/2000000")) }
            tasks.forEach { $0.resume() }
            await delegate.completed.wait(for: tasks.count)
            #expect(!delegate.overlapped)
            for task in tasks { #expect(delegate.body(task).count == 2_000_000) }
            session.invalidateAndCancel()
        }
    }

    @Test func metrics_describeTheTransaction() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/redirect/1"))
            task.resume()
            await delegate.completed.wait()
            let metrics = try #require(delegate.metrics(task))
            #expect(metrics.redirectCount == 1)
            #expect(metrics.transactionMetrics.count == 2)
            #expect(metrics.transactionMetrics.last?.networkProtocolName == "http/1.1")
            session.invalidateAndCancel()
        }
    }

    @Test func serverError_isAResponseNotAnError() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/status/503"))
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.error(task) == nil)
            #expect((task.response as? HTTPURLResponse)?.statusCode == 503)
            session.invalidateAndCancel()
        }
    }

    @Test func cancel_completesOnceWithCancelled() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/stall/1000"))
            task.resume()
            task.cancel()
            await delegate.completed.wait()
            #expect((delegate.error(task) as? URLError)?.code == .cancelled)
            #expect(delegate.calls(task).filter { $0 == "complete" }.count == 1)
            #expect(delegate.calls(task).last == "complete")
            session.invalidateAndCancel()
        }
    }

    @Test func cancelBeforeResume_stillCompletesWithCancelled() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/bytes/10"))
            task.cancel()
            await delegate.completed.wait()
            #expect((delegate.error(task) as? URLError)?.code == .cancelled)
            #expect(server.acceptedConnections == 0)
            session.invalidateAndCancel()
        }
    }
}

/// A task delegate that implements one method: the body.
private final class BodyOnlyDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let received = Mutex(Data())

    var body: Data { received.withLock { $0 } }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        received.withLock { $0.append(data) }
    }
}
