import Foundation
import Synchronization
import LoopbackServer
import Testing
import TestSupport
import URLSessionCompat

/// Download tasks: progress, the file, resume data.
@Suite struct DownloadDelegateTests {
    @Test func download_writesProgressThenTheFileThenCompletes() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.downloadTask(with: server.url("/bytes/2000000"))
            task.resume()
            await delegate.completed.wait()
            #expect(folded(delegate.calls(task)) == ["write", "finishDownloading", "metrics", "complete"])
            let written = delegate.written
            #expect(written.last?.1 == 2_000_000)
            #expect(written.allSatisfy { $0.2 == 2_000_000 })
            #expect(zip(written, written.dropFirst()).allSatisfy { $0.1 < $1.1 })
            session.invalidateAndCancel()
        }
    }

    @Test func downloadedFile_existsDuringTheCallAndIsDeletedAfter() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.downloadTask(with: server.url("/bytes/100000"))
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.downloaded(task) == LoopbackServer.patternBody(count: 100_000))
            let location = try #require(delegate.downloadedLocation)
            #expect(!FileManager.default.fileExists(atPath: location.path))
            session.invalidateAndCancel()
        }
    }

    @Test func failedDownload_resumesAtTheOffsetFromItsResumeData() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let first = session.downloadTask(with: server.url("/range/1000000?dropAfter=300000"))
            first.resume()
            await delegate.completed.wait()
            let error = try #require(delegate.error(first) as? URLError)
            let resumeData = try #require(error.userInfo[NSURLSessionDownloadTaskResumeData] as? Data)
            let second = session.downloadTask(withResumeData: resumeData)
            second.resume()
            await delegate.completed.wait(for: 2)
            #expect(folded(delegate.calls(second)).first == "resume 300000")
            #expect(delegate.downloaded(second) == LoopbackServer.patternBody(count: 1_000_000))
            session.invalidateAndCancel()
        }
    }

    @Test func cancelByProducingResumeData_givesDataThatResumes() async throws {
        try await withServer { server in
            let delegate = CancelOnFirstWriteDelegate()
            let session = makeSession(delegate)
            // The first request stalls after 1 MB, so the task is still running
            // when the cancel lands; the resumed request gets the rest.
            let task = session.downloadTask(with: server.url("/range/4000000?etag=v1&stallAfter=1000000"))
            task.resume()
            let resumeData = try #require(await delegate.resumeData.value().0)
            await delegate.completed.wait()
            #expect(delegate.errors.first == .cancelled)
            let second = session.downloadTask(withResumeData: resumeData)
            second.resume()
            await delegate.completed.wait(for: 2)
            #expect(delegate.errors.last == .some(nil))
            #expect(delegate.downloadedSize == 4_000_000)
            session.invalidateAndCancel()
        }
    }

    @Test func badResumeData_failsWithAClearError() async throws {
        try await withServer { _ in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.downloadTask(withResumeData: Data("not resume data".utf8))
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.error(task) is URLError)
            #expect(delegate.calls(task).last == "complete")
            session.invalidateAndCancel()
        }
    }
}

/// Cancels its first download with resume data at the first progress call;
/// records the size of the file it is handed.
final class CancelOnFirstWriteDelegate: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: state behind the lock; the Outcome and Signal are Sendable.
    let resumeData = Outcome<Data>()
    let completed = Signal()
    private let state = Mutex<(cancelled: Bool, errors: [URLError.Code?], size: Int?)>((false, [], nil))
    var errors: [URLError.Code?] { state.withLock { $0.errors } }
    var downloadedSize: Int? { state.withLock { $0.size } }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        let first = state.withLock { state -> Bool in
            defer { state.cancelled = true }
            return !state.cancelled
        }
        if first { downloadTask.cancel { self.resumeData.set($0, nil, nil) } }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let size = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? Int) ?? nil
        state.withLock { $0.size = size }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLock { $0.errors.append((error as? URLError)?.code) }
        completed.fire()
    }
}
