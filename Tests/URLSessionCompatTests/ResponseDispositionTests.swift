import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// `didReceiveResponse` and its three dispositions.
@Suite struct ResponseDispositionTests {
    @Test func cancelDisposition_completesWithCancelledAndNoData() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate(response: .cancel)
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/bytes/100000"))
            task.resume()
            await delegate.completed.wait()
            #expect((delegate.error(task) as? URLError)?.code == .cancelled)
            #expect(!delegate.calls(task).contains("data"))
            session.invalidateAndCancel()
        }
    }

    @Test func becomeDownload_continuesOnTheNewDownloadTask() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate(response: .becomeDownload)
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/bytes/300000"))
            task.resume()
            await delegate.completed.wait()
            let download = try #require(delegate.becameDownload)
            #expect(download.taskIdentifier != task.taskIdentifier)
            // No further calls name the data task; the download gets the rest.
            #expect(delegate.calls(task) == ["response", "becomeDownload"])
            #expect(folded(delegate.calls(download)) == ["write", "finishDownloading", "metrics", "complete"])
            #expect(delegate.downloaded(download) == LoopbackServer.patternBody(count: 300_000))
            #expect(delegate.error(download) == nil)
            #expect(task.state == .completed)
            session.invalidateAndCancel()
        }
    }

    @Test func notImplemented_allows() async throws {
        try await withServer { server in
            let delegate = CompletionOnlyDelegate()
            let session = makeSession(delegate)
            session.dataTask(with: server.url("/bytes/1000")).resume()
            await delegate.completed.wait()
            #expect(delegate.errors == [nil])
            session.invalidateAndCancel()
        }
    }
}

/// A delegate that implements only `didCompleteWithError`: every other call
/// takes its default.
final class CompletionOnlyDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // @unchecked: state behind the lock.
    let completed = Signal()
    private let recorded = Mutex<[URLError.Code?]>([])
    var errors: [URLError.Code?] { recorded.withLock { $0 } }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        recorded.withLock { $0.append((error as? URLError)?.code) }
        completed.fire()
    }
}
