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
        var step = guarded.withLock { $0.becomeDownload(into: file) }
        if case .writeWholeBodyFirst(let chunks, let bytes) = step {
            // On this consumer's thread, outside the lock: the file is whole
            // before `downloaded` is queued.
            if let error = Self.writeOut(chunks, to: file) {
                file.remove()
                step = .failed(error)
            } else {
                step = guarded.withLock { $0.becomeDownload(afterWriting: file, bytes: bytes) }
            }
        }
        switch step {
        case .refused:
            break
        case .failed(let error):
            cancelWith(error)
        case .became(let exchange):
            becameDownload.store(true, ordering: .relaxed)
            exchange?.resumeReceiving()
        case .writeWholeBodyFirst:
            preconditionFailure("the machine asks to write the body once, before its second half")
        }
    }

    /// Writes `chunks` to `file` and waits for them; the first error.
    private static func writeOut(_ chunks: [Data], to file: DownloadFile) -> URLError? {
        for chunk in chunks {
            if let error = file.enqueue(chunk) { return error }
        }
        if let error = file.drain() { return error }
        file.close()
        return nil
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
        let end = guarded.withLock { $0.finishDownload(error: error) }
        end.wake?.run(by: self)
        for waiter in end.waiters { waiter.resume(returning: end.resumeData) }
        return end.error
    }

    /// Stops the download and returns resume data, or nil when it cannot be
    /// resumed (no validator from the server, nothing received, already over).
    func cancelByProducingResumeData() async -> Data? {
        await withCheckedContinuation { continuation in
            let over = !guarded.withLock { $0.askForResumeData(continuation) }
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
        guard let file = guarded.withLock({ $0.downloadedFile }) else {
            throw URLError.make(.cannotCreateFile, url: failingURLString, reason: "The download produced no file.")
        }
        return file
    }
}
