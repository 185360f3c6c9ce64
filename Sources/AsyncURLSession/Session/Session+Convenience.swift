internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// Loads the whole body into memory, as `URLSession.data(for:)`.
    /// Bodies larger than `configuration.maximumCollectedBodySize` fail with
    /// `URLError(.dataLengthExceedsMaximum)`. Cancelling the calling Swift task
    /// cancels the transfer.
    public nonisolated func data(
        for request: URLRequest, delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        try await collect(dataTask(with: request, delegate: delegate))
    }

    public nonisolated func data(
        from url: URL, delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        try await data(for: URLRequest(url: url), delegate: delegate)
    }

    /// Uploads `bodyData` and returns the response body, as `URLSession.upload(for:from:)`.
    public nonisolated func upload(
        for request: URLRequest, from bodyData: Data, delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        try await collect(uploadTask(with: request, from: bodyData, delegate: delegate))
    }

    /// Uploads a file, read as it is sent, as `URLSession.upload(for:fromFile:)`.
    public nonisolated func upload(
        for request: URLRequest, fromFile fileURL: URL, delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        try await collect(uploadTask(with: request, fromFile: fileURL, delegate: delegate))
    }

    private nonisolated func collect(_ task: SessionTask) async throws -> (Data, URLResponse) {
        task.core.resumeCollecting()
        let (data, response) = try await task.core.collect()
        return (data, response)
    }

    /// Downloads to a file the caller owns (move or delete it), as
    /// `URLSession.download(for:)`. Left where it is, in the download
    /// folder, it is removed a day after its last write, as a partial
    /// download is (see `SessionConfiguration.downloadDirectory`).
    public nonisolated func download(
        for request: URLRequest, delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (URL, URLResponse) {
        try await collectDownload(downloadTask(with: request, delegate: delegate))
    }

    public nonisolated func download(
        from url: URL, delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (URL, URLResponse) {
        try await download(for: URLRequest(url: url), delegate: delegate)
    }

    /// Continues a download from resume data, as `URLSession.download(resumeFrom:)`.
    public nonisolated func download(
        resumeFrom resumeData: Data, delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (URL, URLResponse) {
        try await collectDownload(downloadTask(withResumeData: resumeData, delegate: delegate))
    }

    private nonisolated func collectDownload(_ task: SessionTask) async throws -> (URL, URLResponse) {
        task.core.resumeCollecting()
        let (url, response) = try await task.core.collectDownload()
        return (url, response)
    }

    /// The response as soon as its head arrives, and the body as a sequence
    /// of bytes, as `URLSession.bytes(for:)`. The transfer is paced by the
    /// iteration: it pauses while nobody reads.
    public nonisolated func bytes(
        for request: URLRequest, delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (AsyncBytes, URLResponse) {
        let task = dataTask(with: request, delegate: delegate)
        task.resume()
        while let event = try await task.core.nextEvent() {
            if case .response(let response, _) = event {
                return (AsyncBytes(task: task), response)
            }
        }
        throw URLError.make(
            .badServerResponse, url: request.url?.absoluteString, reason: "The transfer ended without a response.")
    }

    public nonisolated func bytes(
        from url: URL, delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (AsyncBytes, URLResponse) {
        try await bytes(for: URLRequest(url: url), delegate: delegate)
    }
}
