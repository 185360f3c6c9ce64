import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Apple's async calls on the classic session. The optional delegate is the
/// task's own: it hears redirects and challenges before the session's
/// delegate. Cancelling the calling Swift task cancels the transfer.
extension URLSession {
    /// The body of `bytes(for:)`, as Apple's `URLSession.AsyncBytes`.
    public typealias AsyncBytes = AsyncURLSession.AsyncBytes

    public func data(
        for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        try await collect(asyncSession.dataTask(with: request), delegate: delegate)
    }

    public func data(
        from url: URL, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        try await data(for: URLRequest(url: url), delegate: delegate)
    }

    public func upload(
        for request: URLRequest, from bodyData: Data, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        try await collect(asyncSession.uploadTask(with: request, from: bodyData), delegate: delegate)
    }

    public func upload(
        for request: URLRequest, fromFile fileURL: URL, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        try await collect(asyncSession.uploadTask(with: request, fromFile: fileURL), delegate: delegate)
    }

    /// The file is the caller's: move or delete it.
    public func download(
        for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (URL, URLResponse) {
        try await download(asyncSession.downloadTask(with: request), delegate: delegate)
    }

    public func download(
        from url: URL, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (URL, URLResponse) {
        try await download(for: URLRequest(url: url), delegate: delegate)
    }

    public func download(
        resumeFrom resumeData: Data, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (URL, URLResponse) {
        try await download(asyncSession.downloadTask(withResumeData: resumeData), delegate: delegate)
    }

    /// The response once its head arrives, and the body as bytes, paced by
    /// the iteration.
    public func bytes(
        for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (AsyncBytes, URLResponse) {
        let slot = AnswerSlot<Result<(AsyncBytes, URLResponse), any Error>>()
        let task = makeTask(asyncSession.dataTask(with: request), completion: .bytes(slot))
        return try await start(task, delegate: delegate, slot: slot)
    }

    public func bytes(
        from url: URL, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (AsyncBytes, URLResponse) {
        try await bytes(for: URLRequest(url: url), delegate: delegate)
    }

    // MARK: - Plumbing

    private func collect(
        _ core: SessionTask, delegate: (any URLSessionTaskDelegate)?
    ) async throws -> (Data, URLResponse) {
        // Nobody to tell anything (no task delegate, no session delegate):
        // the caller awaits the core's collection itself, as the core's
        // `data(for:)` does. No handler on the delegate queue, so no thread
        // woken there and no hand-off back to this Swift task: about 30 µs
        // of CPU per small request (Sources/Benchmarks/README.md).
        if delegate == nil, self.delegate == nil, core.collectBody() {
            return try await awaitCollection(of: makeTask(core, completion: .awaitedByCaller))
        }
        let slot = AnswerSlot<Result<(Data, URLResponse), any Error>>()
        let task = makeTask(core, completion: .data { data, response, error in
            slot.fill(Self.result(data, response, error))
        })
        return try await start(task, delegate: delegate, slot: slot)
    }

    private func download(
        _ core: SessionTask, delegate: (any URLSessionTaskDelegate)?
    ) async throws -> (URL, URLResponse) {
        let slot = AnswerSlot<Result<(URL, URLResponse), any Error>>()
        let task = makeDownloadTask(core, completion: .download { file, response, error in
            // The handler's file is deleted after it returns: take it over.
            let owned = file.map {
                $0.deletingLastPathComponent().appendingPathComponent("download-\(UUID().uuidString).tmp")
            }
            do {
                if let file, let owned { try FileManager.default.moveItem(at: file, to: owned) }
                slot.fill(Self.result(owned, response, error))
            } catch {
                slot.fill(.failure(URLError.adapter(
                    .cannotMoveFile, "The downloaded file could not be handed over: \(error)", url: response?.url)))
            }
        })
        return try await start(task, delegate: delegate, slot: slot)
    }

    /// Resumes `task` (which collects its body: `.awaitedByCaller`) and
    /// waits for its end here; the completion is delivered by returning.
    private func awaitCollection(of task: URLSessionDataTask) async throws -> (Data, URLResponse) {
        defer {
            task.markCompletionDelivered()
            taskDidCompleteWithoutWaiting(task)
        }
        return try await withTaskCancellationHandler {
            task.resume()
            return try await task.core.collectedData()
        } onCancel: {
            task.cancel()
        }
    }

    private static func result<Value: Sendable>(
        _ value: Value?, _ response: URLResponse?, _ error: (any Error)?
    ) -> Result<(Value, URLResponse), any Error> {
        if let error { return .failure(error) }
        guard let value, let response else {
            return .failure(URLError.adapter(
                .badServerResponse, "The transfer ended without a response.", url: response?.url))
        }
        return .success((value, response))
    }

    private func start<Value: Sendable>(
        _ task: URLSessionTask, delegate: (any URLSessionTaskDelegate)?, slot: AnswerSlot<Result<Value, any Error>>
    ) async throws -> Value {
        task.delegate = delegate
        task.reportsProgressToTaskDelegate = delegate != nil
        return try await withTaskCancellationHandler {
            task.resume()
            guard let result = await slot.wait() else {
                throw URLError.adapter(.cancelled, "cancelled", url: task.currentRequest?.url)
            }
            return try result.get()
        } onCancel: {
            task.cancel()
        }
    }
}
