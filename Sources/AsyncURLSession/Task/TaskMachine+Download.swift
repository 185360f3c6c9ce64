import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A download's file in the machine: a data task turning into a download,
/// and the file's end (handed out, or kept with resume data).
extension TaskMachine {
    /// What `becomeDownload(into:)` did.
    enum BecomeDownloadStep {
        /// Not for this task now (data(for:), twice, after a failure, a
        /// body the consumer took meanwhile): the file was removed.
        case refused
        /// Writing what was queued failed.
        case failed(URLError)
        /// The body goes to the file from now on; the exchange (if the
        /// transfer still runs) resumes receiving.
        case became(resumeReceiving: (any HopExchange)?)
        /// The whole body had arrived: the driver writes these chunks out
        /// and waits for them, outside the lock, then calls
        /// `becomeDownload(afterWriting:bytes:)`.
        case writeWholeBodyFirst([Data], bytes: Int)
    }

    /// A data task's response decision said `becomeDownload`: what is queued
    /// goes to `file`, and the rest of the body after it.
    mutating func becomeDownload(into file: DownloadFile) -> BecomeDownloadStep {
        // Not for data(for:) (it returns Data), not twice, not after a failure.
        var ended = false
        if let end = pipeline.end {
            guard case .success = end else {
                file.remove()
                return .refused
            }
            ended = true
        }
        guard pipeline.consumer == .events, download == nil else {
            file.remove()
            return .refused
        }
        if ended {
            // At most the stream buffer (1 MiB), written and waited for by
            // the driver, so that the file is whole when `downloaded` is
            // handed out: file I/O, never under this lock.
            return .writeWholeBodyFirst(pipeline.queuedBody, bytes: pipeline.queuedBodyBytes)
        }
        // The transfer runs: the queued chunks go to the file's writer here
        // (a hand-off to its queue, no I/O), under the lock, so that they
        // are queued before any chunk the engine thread writes once the
        // download below exists.
        for chunk in pipeline.takeQueuedBody() {
            if let error = file.enqueue(chunk) { return .failed(error) }
        }
        writeBody(to: DownloadState(file: file, after: pipeline.response))
        return .became(resumeReceiving: exchange)
    }

    /// The second half of becoming a download after the whole body arrived:
    /// the driver wrote the `bytes` queued then to `file`. If the consumer
    /// took some of them meanwhile (it pulled while the decision was answered
    /// on another thread), the events had the body: the file goes.
    mutating func becomeDownload(afterWriting file: DownloadFile, bytes: Int) -> BecomeDownloadStep {
        guard case .success? = pipeline.end, pipeline.consumer == .events, download == nil,
            pipeline.queuedBodyBytes == bytes
        else {
            file.remove()
            return .refused
        }
        _ = pipeline.takeQueuedBody()
        writeBody(to: DownloadState(file: file, after: pipeline.response))
        download?.finished(file)
        let total = pipeline.bytesReceived
        pipeline.insertDownloadEnd([
            .downloadProgress(TransferProgress(
                bytes: total, totalBytes: total, totalBytesExpected: pipeline.bytesExpectedToReceive)),
            .downloaded(file.url),
        ])
        return .became(resumeReceiving: nil)
    }

    /// What a download's end leaves to the driver.
    struct DownloadEnd {
        /// The error to end with (carrying resume data), nil for success.
        let error: URLError?
        /// `cancelByProducingResumeData()` callers, answered with `resumeData`.
        let waiters: [CheckedContinuation<Data?, Never>]
        let resumeData: Data?
        let wake: Wake?
    }

    /// The download's file after its queued writes: success hands it out
    /// (last progress, `downloaded`); a failure keeps it with resume data
    /// when the download can continue (a network failure after some bytes,
    /// or `cancelByProducingResumeData`), else deletes it.
    mutating func finishDownload(error: URLError?) -> DownloadEnd {
        let waiters = resumeData.takeWaiters()
        guard let file = download?.file else {
            return DownloadEnd(error: error, waiters: waiters, resumeData: nil, wake: nil)
        }
        guard let error else {
            file.close()
            download?.finished(file)
            var wake: Wake?
            if let progress = download?.finalProgress(at: pipeline.bytesReceived, of: pipeline.bytesExpectedToReceive) {
                wake = self.wake(for: pipeline.downloadProgress(progress))
            }
            let delivery = pipeline.offer(.downloaded(file.url))
            if wake == nil { wake = self.wake(for: delivery) }
            return DownloadEnd(error: nil, waiters: waiters, resumeData: nil, wake: wake)
        }
        download?.releaseFile()
        let resumable = resumeData.isWanted || Self.canResume(after: error)
        guard resumable, file.size > 0, let state = download, state.hasValidator,
            let data = Self.makeResumeData(file: file, state: state, request: hop.request)
        else {
            file.remove()
            return DownloadEnd(error: error, waiters: waiters, resumeData: nil, wake: nil)
        }
        file.close()
        var info = error.userInfo
        info[URLError.downloadTaskResumeDataKey] = data
        return DownloadEnd(error: URLError(error.code, userInfo: info), waiters: waiters, resumeData: data, wake: nil)
    }

    /// The network failed, or the disk did (full: free space, then resume).
    private static func canResume(after error: URLError) -> Bool {
        error.code.isTransientNetworkFailure || error.code == .cannotWriteToFile
    }

    private static func makeResumeData(file: DownloadFile, state: DownloadState, request: URLRequest) -> Data? {
        guard let url = request.url else { return nil }
        // Credentials and cookies never go into resume data (apps store it).
        let secret: Set<String> = ["authorization", "proxy-authorization", "cookie", "range", "if-range"]
        let headers = (request.allHTTPHeaderFields ?? [:])
            .filter { !secret.contains($0.key.lowercased()) }
            .sorted { $0.key < $1.key }
            .map { [$0.key, $0.value] }
        let payload = ResumeData.Payload(
            url: url.absoluteString, method: request.httpMethod ?? "GET", headers: headers, fileName: file.name,
            bytesReceived: file.size, entityTag: state.entityTag, lastModified: state.lastModified)
        return ResumeData(payload: payload).encoded()
    }

    /// `cancelByProducingResumeData()`: false when the task is over (no
    /// resume data), else the caller waits for the end.
    mutating func askForResumeData(_ continuation: CheckedContinuation<Data?, Never>) -> Bool {
        guard pipeline.end == nil else { return false }
        resumeData.ask(continuation)
        return true
    }
}
