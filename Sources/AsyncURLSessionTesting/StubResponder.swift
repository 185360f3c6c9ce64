import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Plays one `StubResponse` for one request: reads the request's body (as
/// a server would, reporting upload progress), records the request, then
/// writes the response through the task's writer.
struct StubResponder: LocalResponder {
    enum Source: Sendable {
        case fixed(StubResponse)
        case handler(@Sendable (StubbedRequest) async throws -> StubResponse)
        /// No stub matched; the text lists the stubs there are.
        case unmatched(String)
    }

    let transport: StubTransport
    let source: Source

    /// A request body a stub reads whole; a larger one fails the request.
    static let maximumBodySize = 256 << 20

    func respond(to request: LocalRequest, through writer: LocalResponseWriter) async throws(URLError) {
        let body = try await request.body.collect(upTo: Self.maximumBodySize)
        var fields: [String: String] = [:]
        for (name, value) in request.request.allHTTPHeaderFields ?? [:] { fields[name] = value }
        let recorded = StubbedRequest(
            method: request.httpMethod, url: request.url ?? URL(string: "about:blank")!, headerFields: fields,
            body: body, credential: request.credential)
        let response: StubResponse
        switch source {
        case .fixed(let fixed):
            transport.record(recorded, matched: true)
            response = fixed
        case .handler(let handler):
            transport.record(recorded, matched: true)
            do {
                response = try await handler(recorded)
            } catch let error as URLError {
                throw error
            } catch {
                throw URLError(.unknown, userInfo: [
                    NSLocalizedDescriptionKey: "The stub's handler for \(recorded.description) threw \(error).",
                ])
            }
        case .unmatched(let stubs):
            transport.record(recorded, matched: false)
            throw URLError(.unsupportedURL, userInfo: [
                NSLocalizedDescriptionKey: "StubTransport has no stub for \(recorded.description). \(stubs) "
                    + "Add one with stub(_:with:), or make the transport with unmatched: .network "
                    + "to send such requests to the network.",
            ])
        }
        try await play(response, for: request, through: writer)
    }

    private func play(_ response: StubResponse, for request: LocalRequest, through writer: LocalResponseWriter)
        async throws(URLError)
    {
        try await Self.sleep(response.headDelay)
        switch response.plan {
        case .fail(let error):
            throw error
        case .silence:
            while true { try await Self.sleep(.seconds(3600)) }
        case .respond(let status, let headers, let body, let failure):
            try await writer.writeHead(statusCode: status, headerFields: headers)
            if request.httpMethod.uppercased() != "HEAD" {
                switch body {
                case .whole(let data):
                    try await writer.writeBody(data)
                case .chunks(let pieces, let interval):
                    for (index, piece) in pieces.enumerated() {
                        if index > 0 { try await Self.sleep(interval) }
                        try await writer.writeBody(piece)
                    }
                case .endless(let piece, let interval):
                    while true {
                        try await writer.writeBody(piece)
                        try await Self.sleep(interval)
                    }
                }
            }
            if let failure { throw failure }
        }
    }

    /// Sleeps, or throws `.cancelled` once the task no longer wants the answer.
    private static func sleep(_ duration: Duration) async throws(URLError) {
        if duration > .zero {
            try? await Task.sleep(for: duration)
        } else {
            await Task.yield()
        }
        if Task.isCancelled { throw URLError(.cancelled) }
    }
}
