internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Something that answers a hop without libcurl: the seam every non-network
/// source of responses goes through (the response cache now; a test stub,
/// a URLProtocol or the background agent would be further responders).
/// `LocalTransfer` turns what it writes into the very calls the engine
/// makes, so the task pipeline (events, decisions, backpressure,
/// downloads, metrics, cancellation) runs unchanged over it.
protocol LocalResponder: Sendable {
    /// Where the answer comes from, for the hop's metrics.
    var fetchType: TransactionMetrics.FetchType { get }

    /// Writes the response (a head, then body pieces) for `request`.
    /// Throwing ends the hop with that error; returning ends it normally.
    /// `writer` throws when the task stopped wanting the answer (cancelled,
    /// failed): return or rethrow then.
    func respond(to request: URLRequest, through writer: LocalResponseWriter) async throws(URLError)
}

/// A stored response, answered in one go: what a cache hit sends.
struct StoredResponseResponder: LocalResponder {
    let stored: CachedResponse

    var fetchType: TransactionMetrics.FetchType { .localCache }

    /// Body pieces of at most this size, as a network read would hand them.
    static let pieceSize = 64 << 10

    func respond(to request: URLRequest, through writer: LocalResponseWriter) async throws(URLError) {
        try await writer.writeHead(statusCode: stored.statusCode, httpVersion: stored.httpVersion, fields: stored.fields)
        // HEAD gets the head only.
        guard (request.httpMethod ?? "GET").uppercased() != "HEAD" else { return }
        var offset = 0
        let body = stored.data
        while offset < body.count {
            let end = min(body.count, offset + Self.pieceSize)
            try await writer.writeBody(body.subdata(in: body.startIndex + offset..<body.startIndex + end))
            offset = end
        }
    }
}
