internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Answers some of a session's requests without the network.
///
/// The one seam for every source of responses that is not libcurl: the stub
/// transport of `AsyncURLSessionTesting` (scripted responses for tests), the
/// classic API's `URLProtocol` classes, the response cache. A task whose
/// request it answers runs the very pipeline a network task runs (events,
/// redirect and challenge decisions, backpressure, progress, metrics,
/// downloads and resume data, cancellation, timeouts); only the wire is
/// missing.
///
/// Set it as `SessionConfiguration.localTransport`. Every hop asks it again
/// (each redirect, each retry with a credential), after the response cache
/// and with the request as it would be sent (the configuration's headers,
/// cookies, `User-Agent`, `Accept-Encoding`, a Basic credential as
/// `Authorization`). `responder(for:)` runs on the task's thread: keep it
/// quick, and answer in the responder.
public protocol LocalTransport: Sendable {
    /// Whether it may answer anything now. When false the hop goes to the
    /// network without building the `LocalRequest` (a transport that is
    /// installed but empty costs one call per hop). Default: true.
    var isActive: Bool { get }

    /// The responder for `request`, or nil to send it over the network.
    func responder(for request: LocalRequest) -> (any LocalResponder)?
}

extension LocalTransport {
    public var isActive: Bool { true }
}

/// Writes the response to one request, through a `LocalResponseWriter`.
public protocol LocalResponder: Sendable {
    /// What a task's metrics say the answer came from (default:
    /// `.networkLoad`, as a stub stands in for a server).
    var fetchType: TransactionMetrics.FetchType { get }

    /// Writes the response (`writeHead` once, then body pieces) for
    /// `request`. Returning ends the response; throwing ends the task with
    /// that error (after the head too: a connection lost mid-body).
    /// `writer` throws once the task no longer wants the answer (cancelled,
    /// timed out, failed): rethrow or return then.
    func respond(to request: LocalRequest, through writer: LocalResponseWriter) async throws(URLError)
}

extension LocalResponder {
    public var fetchType: TransactionMetrics.FetchType { .networkLoad }
}

/// One hop's request, as the network would have received it.
public struct LocalRequest: Sendable {
    /// Method, URL and header fields as they would be sent (the body is
    /// `body`, not `httpBody`).
    public let request: URLRequest
    /// The request body (upload tasks, `httpBody` and `httpBodyStream`
    /// included); empty for a request without one.
    public let body: LocalRequestBody
    /// The credential this hop answers a challenge with, if any (a Basic one
    /// is also in the `Authorization` field, as libcurl would send it).
    public let credential: URLCredential?
    /// The `taskIdentifier` of the task this hop belongs to (unique in its
    /// session), to tell the hops of concurrent tasks apart.
    public let taskIdentifier: Int

    public var url: URL? { request.url }
    public var httpMethod: String { request.httpMethod ?? "GET" }

    public func value(forHTTPHeaderField field: String) -> String? {
        request.value(forHTTPHeaderField: field)
    }
}

/// The body of a `LocalRequest`, read once, in pieces or whole. Reading it
/// reports upload progress to the task, as sending it would.
public final class LocalRequestBody: Sendable {
    enum Source: Sendable {
        case none
        case data(Data)
        case file(URL)
        case stream(BodyStream)
    }

    let source: Source
    /// Bytes expected (-1 unknown, 0 none), for upload progress.
    public let expectedLength: Int64
    private let reader = Mutex(Reader())
    private let progress: @Sendable (_ sent: Int64, _ expected: Int64) -> Void

    private struct Reader {
        var offset = 0
        var sent: Int64 = 0
        var fileHandle: FileHandle?
        var finished = false
    }

    init(_ source: Source, expectedLength: Int64, progress: @escaping @Sendable (Int64, Int64) -> Void) {
        self.source = source
        self.expectedLength = expectedLength
        self.progress = progress
    }

    /// Whether the request has no body at all.
    public var isEmpty: Bool {
        if case .none = source { return true }
        return expectedLength == 0
    }

    /// The next piece of the body (at most 64 KiB for data and files, a
    /// producer's chunk for streams), or nil at its end.
    public func next() async throws(URLError) -> Data? {
        let piece: Data?
        switch source {
        case .none:
            piece = nil
        case .data(let data):
            piece = reader.withLock { reader -> Data? in
                guard reader.offset < data.count else { return nil }
                let end = min(data.count, reader.offset + LocalResponseWriter.pieceSize)
                defer { reader.offset = end }
                return data.subdata(in: data.startIndex + reader.offset..<data.startIndex + end)
            }
        case .file(let url):
            piece = try reader.withLock { reader throws(URLError) -> Data? in
                if reader.finished { return nil }
                if reader.fileHandle == nil {
                    guard let handle = try? FileHandle(forReadingFrom: url) else {
                        throw URLError.make(
                            .noPermissionsToReadFile, url: nil, reason: "Cannot read the upload file \(url.path).")
                    }
                    reader.fileHandle = handle
                }
                let data = (try? reader.fileHandle?.read(upToCount: LocalResponseWriter.pieceSize)) ?? nil
                guard let data, !data.isEmpty else {
                    try? reader.fileHandle?.close()
                    reader.finished = true
                    return nil
                }
                return data
            }
        case .stream(let stream):
            piece = try await stream.nextChunk()
        }
        if let piece {
            let sent = reader.withLock { reader in
                reader.sent += Int64(piece.count)
                return reader.sent
            }
            progress(sent, expectedLength)
        }
        return piece
    }

    /// The rest of the body, whole; fails with `.dataLengthExceedsMaximum`
    /// past `limit` bytes.
    public func collect(upTo limit: Int = 64 << 20) async throws(URLError) -> Data {
        var data = Data()
        while let piece = try await next() {
            guard data.count + piece.count <= limit else {
                throw URLError.make(
                    .dataLengthExceedsMaximum, url: nil,
                    reason: "The request body is larger than \(limit) bytes; read it with next() instead.")
            }
            data.append(piece)
        }
        return data
    }

    /// The hop ended: a producer still writing to a stream body stops.
    func close() {
        if case .stream(let stream) = source { stream.cancel() }
        reader.withLock { reader in
            try? reader.fileHandle?.close()
            reader.fileHandle = nil
            reader.finished = true
        }
    }
}
