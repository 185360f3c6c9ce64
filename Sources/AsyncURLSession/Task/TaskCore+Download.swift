internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif


extension TaskCore {
    var downloadDirectory: DownloadDirectory {
        DownloadDirectory(url: context.configuration.downloadDirectory ?? DownloadDirectory.defaultURL())
    }

    /// Creates (or, from resume data, reopens) the file, then starts the first hop.
    func startDownload() {
        let result: Result<DownloadFile, URLError>
        if let resume = resumeFrom {
            result = downloadDirectory.reopen(name: resume.payload.fileName, expectedSize: resume.payload.bytesReceived)
        } else {
            result = downloadDirectory.createFile()
        }
        switch result {
        case .failure(let error):
            complete(error: error, metrics: nil)
        case .success(let file):
            guarded.withLock { $0.writeBody(to: DownloadState(file: file, resumingFrom: resumeFrom)) }
            startHop(originalRequest, credential: nil)
        }
    }

    /// Before a download's response is published: where the file continues
    /// (a 206 for the range asked for continues it; anything else restarts
    /// it), and the `resumed` event for a download from resume data.
    func downloadResponseArrived(_ response: HTTPURLResponse, in guarded: inout TaskMachine) -> TaskEvent? {
        guard let file = guarded.download?.file else { return nil }
        let validator = ResumeData.validator(of: response)
        guard let continuation = guarded.download?.responseArrived(
            statusCode: response.statusCode, contentRange: ContentRange(response),
            expectedContentLength: response.expectedContentLength,
            entityTag: validator.entityTag, lastModified: validator.lastModified)
        else { return nil }
        if continuation.restartsFile { file.truncate(to: 0) }
        guarded.pipeline.resumedAt(offset: continuation.offset, expectedTotal: continuation.expectedTotal)
        return continuation.resumedEvent
    }

    /// Body bytes of a download: written to its file (engine thread, under the lock).
    func downloadReceived(_ bytes: UnsafeRawBufferPointer, in guarded: inout TaskMachine) -> (BodyVerdict, Wake?) {
        switch guarded.pipeline.receivedDownloadBytes(count: bytes.count) {
        case .pause: return (.pause, nil)
        case .abort(let error): return (.abort(error), nil)
        case .accept: break
        }
        guard let file = guarded.download?.file else { return (.abort(URLError(.cancelled)), nil) }
        if file.isFull {
            // The disk is behind: hand the bytes back and wait for the writer.
            guarded.pipeline.undoDownloadBytes(count: bytes.count)
            if let exchange = guarded.exchange {
                file.whenDrained { exchange.resumeReceiving() }
            }
            return (.pause, nil)
        }
        if let error = file.enqueue(Data(bytes)) { return (.abort(error), nil) }
        updateProgress(&guarded)
        guard let progress = guarded.download?.progress(
            at: guarded.pipeline.bytesReceived, of: guarded.pipeline.bytesExpectedToReceive,
            now: DispatchTime.now().uptimeNanoseconds)
        else { return (.accepted, nil) }
        return (.accepted, guarded.wake(for: guarded.pipeline.downloadProgress(progress)))
    }

    /// A data task's response decision said `becomeDownload`: the rest of the
    /// body (and what is queued already) goes to a file.
    func becomeDownload() {
        let file: DownloadFile
        switch downloadDirectory.createFile() {
        case .success(let created): file = created
        case .failure(let error):
            cancelWith(error)
            return
        }
        let outcome = guarded.withLock { guarded -> (URLError?, (any HopExchange)?) in
            // Not for data(for:) (it returns Data), not twice, not after a failure.
            var ended = false
            if let end = guarded.pipeline.end {
                guard case .success = end else {
                    file.remove()
                    return (nil, nil)
                }
                ended = true
            }
            guard guarded.pipeline.consumer == .events, guarded.download == nil else {
                file.remove()
                return (nil, nil)
            }
            for chunk in guarded.pipeline.takeQueuedBody() {
                if let error = file.enqueue(chunk) { return (error, nil) }
            }
            if ended {
                // The whole body was already here (at most the stream buffer,
                // 1 MiB): write it out now, on this consumer's thread, so the
                // file is whole when `downloaded` is handed out.
                if let error = file.drain() { return (error, nil) }
                file.close()
            }
            guarded.writeBody(to: DownloadState(file: file, after: guarded.pipeline.response))
            becameDownload.store(true, ordering: .relaxed)
            guard ended else { return (nil, guarded.exchange) }
            guarded.download?.finished(file)
            let total = guarded.pipeline.bytesReceived
            guarded.pipeline.insertDownloadEnd([
                .downloadProgress(TransferProgress(
                    bytes: total, totalBytes: total, totalBytesExpected: guarded.pipeline.bytesExpectedToReceive)),
                .downloaded(file.url),
            ])
            return (nil, nil)
        }
        if let error = outcome.0 {
            cancelWith(error)
        } else if let exchange = outcome.1 {
            exchange.resumeReceiving()
        }
    }

    /// Runs as the task ends, after the file's queued writes: success gives
    /// the last progress and `downloaded`; failure keeps the partial file with
    /// resume data when the download can continue (a network failure after
    /// some bytes, or `cancelByProducingResumeData`), else deletes it.
    /// `then` gets the error to end with (carrying the resume data).
    func finishDownload(error: URLError?, then: @escaping @Sendable (URLError?) -> Void) {
        guard let file = guarded.withLock({ $0.download?.file }) else {
            // Not a download, or finished already: only waiters to answer.
            let waiters = guarded.withLock { $0.resumeData.takeWaiters() }
            for waiter in waiters { waiter.resume(returning: nil) }
            then(error)
            return
        }
        file.flush { [self] writeError in
            then(finishDownloadAfterFlush(error: error ?? writeError))
        }
    }

    private func finishDownloadAfterFlush(error: URLError?) -> URLError? {
        let (result, waiters, resumeData, wake) = guarded.withLock {
            guarded -> (URLError?, [CheckedContinuation<Data?, Never>], Data?, Wake?) in
            let waiters = guarded.resumeData.takeWaiters()
            guard let file = guarded.download?.file else { return (error, waiters, nil, nil) }
            guard let error else {
                file.close()
                guarded.download?.finished(file)
                var wake: Wake?
                if let progress = guarded.download?.finalProgress(
                    at: guarded.pipeline.bytesReceived, of: guarded.pipeline.bytesExpectedToReceive)
                {
                    wake = guarded.wake(for: guarded.pipeline.downloadProgress(progress))
                }
                let delivery = guarded.pipeline.offer(.downloaded(file.url))
                if wake == nil { wake = guarded.wake(for: delivery) }
                return (nil, waiters, nil, wake)
            }
            guarded.download?.releaseFile()
            let resumable = guarded.resumeData.isWanted || Self.canResume(after: error)
            guard resumable, file.size > 0, let state = guarded.download, state.hasValidator,
                let data = makeResumeData(file: file, state: state, request: guarded.hop.request)
            else {
                file.remove()
                return (error, waiters, nil, nil)
            }
            file.close()
            var info = error.userInfo
            info[URLError.downloadTaskResumeDataKey] = data
            return (URLError(error.code, userInfo: info), waiters, data, nil)
        }
        wake?.run(by: self)
        for waiter in waiters { waiter.resume(returning: resumeData) }
        return result
    }

    /// The network failed, or the disk did (full: free space, then resume).
    private static func canResume(after error: URLError) -> Bool {
        error.code.isTransientNetworkFailure || error.code == .cannotWriteToFile
    }

    private func makeResumeData(file: DownloadFile, state: DownloadState, request: URLRequest) -> Data? {
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

    /// Stops the download and returns resume data, or nil when it cannot be
    /// resumed (no validator from the server, nothing received, already over).
    func cancelByProducingResumeData() async -> Data? {
        await withCheckedContinuation { continuation in
            let over = guarded.withLock { guarded -> Bool in
                guard guarded.pipeline.end == nil else { return true }
                guarded.resumeData.ask(continuation)
                return false
            }
            if over {
                continuation.resume(returning: nil)
            } else {
                cancel()
            }
        }
    }

    /// Waits for a download's file (after `resumeCollecting()`).
    func collectDownload() async throws -> (URL, HTTPURLResponse) {
        _ = try await collect()
        return try guarded.withLock { guarded in
            guard let url = guarded.download?.finishedURL, let response = guarded.pipeline.response else {
                throw URLError.make(.cannotCreateFile, url: failingURLString, reason: "The download produced no file.")
            }
            return (url, response)
        }
    }
}
