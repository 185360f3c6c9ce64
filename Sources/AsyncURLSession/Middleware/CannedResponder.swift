import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers an attempt with the response a middleware gave
/// (`MiddlewareRequestStep.respond`), as a server would have.
struct CannedResponder: LocalResponder {
    let response: HTTPURLResponse
    let body: Data

    func respond(to request: LocalRequest, through writer: LocalResponseWriter) async throws(URLError) {
        var fields: [(name: String, value: String)] = []
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, let value = value as? String else { continue }
            fields.append((name: name, value: value))
        }
        try await writer.writeHead(statusCode: response.statusCode, headerFields: fields)
        if !body.isEmpty { try await writer.writeBody(body) }
    }
}
