import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers one request from a `HARReplay`: reads the body (the entry may
/// be chosen by it), picks the entry, writes its response.
struct HARReplayResponder: LocalResponder {
    let replay: HARReplay

    /// Fields that described the recorded wire, not the recorded (decoded)
    /// body this answer sends.
    private static let wireFields: Set<String> = [
        "content-encoding", "transfer-encoding", "content-length", "connection", "keep-alive",
    ]

    func respond(to request: LocalRequest, through writer: LocalResponseWriter) async throws(URLError) {
        let body = try await request.body.collect(upTo: StubResponder.maximumBodySize)
        let url = request.url ?? URL(string: "about:blank")!
        guard
            let entry = replay.take(
                method: request.httpMethod, url: url, headers: request.request.allHTTPHeaderFields ?? [:], body: body)
        else {
            throw URLError(.unsupportedURL, userInfo: [
                NSLocalizedDescriptionKey: replay.unmatchedMessage(method: request.httpMethod, url: url),
                NSURLErrorFailingURLErrorKey: url,
            ])
        }
        let isHead = request.httpMethod.uppercased() == "HEAD"
        let content = entry.response.content.data
        var fields: [(name: String, value: String)] = []
        for header in entry.response.headers {
            let name = header.name.lowercased()
            // HTTP/2 pseudo-headers a browser may list; HEAD keeps its length.
            if name.hasPrefix(":") || (Self.wireFields.contains(name) && !(isHead && name == "content-length")) {
                continue
            }
            if name == "set-cookie", header.value == "<redacted>" { continue }
            fields.append((name: header.name, value: header.value))
        }
        let status = entry.response.status
        if !isHead, status >= 200, status != 204, status != 304 {
            fields.append((name: "Content-Length", value: String(content.count)))
        }
        let timings = entry.timings
        if replay.options.replaysTimings { try await Self.sleep(milliseconds: timings.total - max(timings.receive, 0)) }
        try await writer.writeHead(statusCode: status, headerFields: fields)
        guard !isHead, !content.isEmpty else { return }
        if replay.options.replaysTimings { try await Self.sleep(milliseconds: timings.receive) }
        try await writer.writeBody(content)
    }

    private static func sleep(milliseconds: Double) async throws(URLError) {
        if milliseconds > 0 { try? await Task.sleep(for: .microseconds(Int(milliseconds * 1000))) }
        if Task.isCancelled { throw URLError(.cancelled) }
    }
}
