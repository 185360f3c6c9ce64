import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A stored response, answered in one go: what a cache hit sends.
struct StoredResponseResponder: LocalResponder {
    let stored: CachedResponse

    var fetchType: TransactionMetrics.FetchType { .localCache }

    /// Body pieces of at most this size, as a network read would hand them.
    static let pieceSize = 64 << 10

    func respond(to request: LocalRequest, through writer: LocalResponseWriter) async throws(URLError) {
        try await writer.writeHead(statusCode: stored.statusCode, httpVersion: stored.httpVersion, fields: stored.fields)
        // HEAD gets the head only.
        guard request.httpMethod.uppercased() != "HEAD" else { return }
        var offset = 0
        let body = stored.data
        while offset < body.count {
            let end = min(body.count, offset + Self.pieceSize)
            try await writer.writeBody(body.subdata(in: body.startIndex + offset..<body.startIndex + end))
            offset = end
        }
    }
}
