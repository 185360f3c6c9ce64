import AsyncURLSession
import AsyncURLSessionTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer

/// Where a parity test sends its requests: the real loopback server, or a
/// `StubTransport` scripted to answer the same routes the same way. The
/// parity tests run each behaviour against both and expect one result.
enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    case loopback
    case stub

    var description: String { rawValue }
}

struct Endpoint: Sendable {
    let baseURL: URL
    let configuration: SessionConfiguration
    let stubs: StubTransport?

    func url(_ pathAndQuery: String) -> URL {
        URL(string: baseURL.absoluteString + pathAndQuery)!
    }
}

/// Runs `body` against `backend`, with a test configuration for it.
func withBackend<T: Sendable>(
    _ backend: Backend, timeLimit: Double = 30, _ body: @escaping @Sendable (Endpoint) async throws -> T
) async throws -> T {
    switch backend {
    case .loopback:
        return try await withServer(timeLimit: timeLimit) { server in
            try await body(Endpoint(baseURL: server.baseURL, configuration: testConfiguration(trusting: server), stubs: nil))
        }
    case .stub:
        let stubs = StubRoutes.transport()
        var configuration = testConfiguration()
        configuration.localTransport = stubs
        let endpoint = Endpoint(baseURL: URL(string: "http://stub.test")!, configuration: configuration, stubs: stubs)
        return try await withTimeLimit(timeLimit) { try await body(endpoint) }
    }
}

/// The loopback server's routes that the parity tests use, as stubs.
enum StubRoutes {
    static func transport() -> StubTransport {
        let stubs = StubTransport()
        stubs.stub(.matching("loopback routes") { _, _ in true }) { request in
            try route(request)
        }
        return stubs
    }

    private static func route(_ request: StubbedRequest) throws -> StubResponse {
        let segments = request.url.path.split(separator: "/").map(String.init)
        let query = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        func value(_ name: String) -> String? { query.first { $0.name == name }?.value }
        func integer(_ name: String, _ defaultValue: Int) -> Int { value(name).flatMap(Int.init) ?? defaultValue }
        let number = segments.count > 1 ? Int(segments[1]) : nil
        switch (segments.first ?? "", number) {
        case ("bytes", let count?):
            return .data(LoopbackServer.patternBody(count: count))
        case ("drip", let count?):
            let chunk = integer("chunk", 1)
            let pieces = stride(from: 0, to: count, by: chunk).map {
                LoopbackServer.patternBody(count: min(chunk, count - $0), offset: $0)
            }
            return .chunks(
                pieces, every: .milliseconds(integer("interval", 100)), headers: ["Content-Length": String(count)])
        case ("drop", let count?):
            let after = integer("after", count / 2)
            return .failure(afterSending: LoopbackServer.patternBody(count: after), declaredLength: count)
        case ("redirect", let remaining?):
            return remaining > 0 ? .redirect(to: "/redirect/\(remaining - 1)") : .text("done")
        case ("status", let code?):
            return .status(code)
        case ("stall-headers", _):
            return .never
        case ("echo-body", _):
            return .data(request.body)
        case ("auth", _) where segments.count > 1 && segments[1] == "basic":
            let token = Data("\(value("user") ?? ""):\(value("password") ?? "")".utf8).base64EncodedString()
            if request.value(forHTTPHeaderField: "Authorization") == "Basic \(token)" {
                return .text("authenticated as \(value("user") ?? "")")
            }
            return .status(
                401, headers: ["WWW-Authenticate": "Basic realm=\"loopback\"", "Content-Type": "text/plain; charset=utf-8"],
                body: Data("authentication required".utf8))
        default:
            return .status(404)
        }
    }
}
