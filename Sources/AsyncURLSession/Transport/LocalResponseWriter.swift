internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What a `LocalResponder` writes its answer with: one head, then body
/// pieces. Each call returns once the task took what it was given, so a
/// slow consumer slows the responder as it would slow a server.
public final class LocalResponseWriter: Sendable {
    private let transfer: LocalTransfer
    private let progress = Mutex((sentHead: false, bodyBytes: Int64(0)))

    /// The hop's URL, for the failure response of a challenge.
    private let url: URL?

    init(transfer: LocalTransfer, url: URL?) {
        self.transfer = transfer
        self.url = url
    }

    /// Whether the head was written.
    public var sentHead: Bool { progress.withLock { $0.sentHead } }
    /// Body bytes the task took so far.
    public var bodyBytes: Int64 { progress.withLock { $0.bodyBytes } }

    /// The response's head: status, then header fields in order (a name
    /// may repeat, as Set-Cookie does). Content-Length, if given, is what
    /// the body pieces should add up to. A 1xx status is an informational
    /// response; the final head follows it. Bodies are delivered as written:
    /// nothing decodes a Content-Encoding.
    public func writeHead(
        statusCode: Int, httpVersion: String = "HTTP/1.1", headerFields: [(name: String, value: String)] = []
    ) async throws(URLError) {
        guard (100...599).contains(statusCode) else {
            throw URLError.make(
                .badServerResponse, url: nil, reason: "The local responder wrote the status code \(statusCode).")
        }
        for (name, value) in headerFields {
            if let problem = HeaderValidation.problem(name: name, value: value) {
                throw URLError.make(.badServerResponse, url: nil, reason: "The local responder's header: \(problem)")
            }
        }
        let head = ResponseHead(
            statusCode: statusCode, httpVersion: httpVersion, fields: ResponseHeaderFields(headerFields))
        if statusCode < 200 {
            try await transfer.deliverInformationalHead(head)
            return
        }
        guard !sentHead else {
            throw URLError.make(.badServerResponse, url: nil, reason: "The local responder wrote a second head.")
        }
        progress.withLock { $0.sentHead = true }
        try await transfer.deliverHead(head)
    }

    /// The head of a response that came from `url`, not the hop's own URL
    /// (the background agent followed redirects): the task's response and
    /// its `currentRequest` name `url`.
    func writeHead(
        statusCode: Int, headerFields: [(name: String, value: String)], finalURL url: URL?
    ) async throws(URLError) {
        if let url, url != self.url { transfer.moveHop(to: url) }
        try await writeHead(statusCode: statusCode, headerFields: headerFields)
    }

    /// A stored response's head (the cache's responder).
    func writeHead(statusCode: Int, httpVersion: String, fields: CachedHeaderFields) async throws(URLError) {
        try await writeHead(
            statusCode: statusCode, httpVersion: httpVersion,
            headerFields: fields.pairs.map { (name: $0.name, value: $0.value) })
    }

    /// The next bytes of the body; returns once the task took them (a slow
    /// consumer makes this wait, as it makes the network wait). Bytes of
    /// any length are handed to the task in pieces of at most 64 KiB, as a
    /// network read hands them, so a whole body written at once still meets
    /// the task's backpressure piece by piece.
    public func writeBody(_ bytes: Data) async throws(URLError) {
        guard !bytes.isEmpty else { return }
        guard sentHead else {
            throw URLError.make(.badServerResponse, url: nil, reason: "The local responder wrote a body before a head.")
        }
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let end = min(bytes.endIndex, offset + Self.pieceSize)
            let piece = offset == bytes.startIndex && end == bytes.endIndex ? bytes : bytes.subdata(in: offset..<end)
            try await transfer.offer(piece)
            progress.withLock { $0.bodyBytes += Int64(piece.count) }
            offset = end
        }
    }

    /// The whole body, as a finished file of `length` bytes written
    /// elsewhere (the background agent's). A download task takes the file
    /// itself (moved into its download folder: no copy on one file
    /// system); any other task gets its bytes in pieces, as `writeBody`.
    /// The file is gone or unchanged afterwards, never half moved.
    func writeBody(contentsOf file: URL, length: Int64) async throws(URLError) {
        guard sentHead else {
            throw URLError.make(.badServerResponse, url: nil, reason: "The local responder wrote a body before a head.")
        }
        if length > 0, try await transfer.offerFile(file, length: length) {
            progress.withLock { $0.bodyBytes += length }
            return
        }
        guard let handle = try? FileHandle(forReadingFrom: file) else {
            throw URLError.make(.cannotOpenFile, url: nil, reason: "Cannot read the finished body at \(file.path).")
        }
        defer { try? handle.close() }
        // Bounded by the file's length.
        while true {
            let piece: Data
            do { piece = try handle.read(upToCount: Self.pieceSize) ?? Data() } catch {
                throw URLError.make(.cannotOpenFile, url: nil, reason: "Cannot read the finished body at \(file.path): \(error).")
            }
            if piece.isEmpty { return }
            try await writeBody(piece)
        }
    }

    /// How far a body being written elsewhere got (reported as a download's
    /// progress; other tasks ignore it). Keeps the hop from idling out.
    func reportBodyProgress(received: Int64, expected: Int64) {
        transfer.reportReceived(received, expected: expected)
    }

    /// How much of the request body was sent elsewhere (the background
    /// agent sends it): the task's upload progress.
    func reportBodySent(_ sent: Int64, expected: Int64) {
        transfer.reportSent(sent, expected: expected)
    }

    /// Asks the task for credentials, as a server's 401 asks: the task's
    /// challenge handling (an events consumer's `.challenge` decision, the
    /// task's or session's delegate) answers, and the answer comes back
    /// here instead of starting a new hop. For responders that run their
    /// own authentication exchange (a classic `URLProtocol` calling
    /// `urlProtocol(_:didReceive:)`). Without a handler, or when nobody
    /// answers, the answer is `.performDefaultHandling`. Throws once the
    /// task no longer wants the answer.
    /// - Parameters:
    ///   - protectionSpace: what the credentials are for (host, realm, method).
    ///   - proposedCredential: a credential to offer the handler, if any.
    ///   - previousFailureCount: failed attempts so far in this space.
    ///   - failureResponse: the response that asked, if any; a bare 401 for
    ///     the hop's URL otherwise.
    public func challenge(
        protectionSpace: URLProtectionSpace, proposedCredential: URLCredential? = nil,
        previousFailureCount: Int = 0, failureResponse: HTTPURLResponse? = nil
    ) async throws(URLError) -> ChallengeDecision.Answer {
        let response = failureResponse ?? HTTPURLResponse(
            url: url ?? URL(fileURLWithPath: "/"), statusCode: 401, httpVersion: "HTTP/1.1", headerFields: [:])
        guard let response else { return .performDefaultHandling }
        let decision = ChallengeDecision(
            protectionSpace: protectionSpace, proposedCredential: proposedCredential,
            previousFailureCount: previousFailureCount, failureResponse: response)
        return try await transfer.challenge(decision)
    }

    /// The largest piece handed to the task at once (and read from a
    /// request body at once: `LocalRequestBody`).
    static let pieceSize = 64 << 10
}
