import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A stored response, answered in one go: what a cache hit sends.
struct StoredResponseResponder: LocalResponder {
    let stored: CachedResponse

    var fetchType: TransactionMetrics.FetchType { .localCache }

    func respond(to request: LocalRequest, through writer: LocalResponseWriter) async throws(URLError) {
        try await writer.writeHead(statusCode: stored.statusCode, httpVersion: stored.httpVersion, fields: stored.fields)
        // HEAD gets the head only.
        guard request.httpMethod.uppercased() != "HEAD" else { return }
        try await writer.writeBody(stored.data)
    }
}
