import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a stub answers with: a head and a body (whole, in paced chunks, or
/// endless), a redirect, a challenge, a failure (before the head or in the
/// middle of the body), or nothing at all. Built with the static functions;
/// `delayed(by:)` holds the head back.
public struct StubResponse: Sendable {
    enum Body: Sendable {
        case whole(Data)
        case chunks([Data], every: Duration)
        case endless(Data, every: Duration)
    }

    enum Plan: Sendable {
        /// A head, a body, then an ending (nil: the response ends normally).
        case respond(status: Int, headers: [(name: String, value: String)], body: Body, thenFail: URLError?)
        case fail(URLError)
        /// Never answers: the task waits for its timeout or a cancel.
        case silence
    }

    let plan: Plan
    var headDelay: Duration = .zero

    // MARK: Heads and whole bodies

    /// `status` with `headers` and `body` (Content-Length is added when
    /// `headers` lack one, as a server would).
    public static func status(_ status: Int, headers: [String: String] = [:], body: Data = Data()) -> StubResponse {
        var fields = headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        if !fields.contains(where: { $0.name.lowercased() == "content-length" }), status >= 200, status != 204, status != 304 {
            fields.append((name: "Content-Length", value: String(body.count)))
        }
        return StubResponse(plan: .respond(status: status, headers: fields, body: .whole(body), thenFail: nil))
    }

    /// 200 with `body`.
    public static func data(_ body: Data, status: Int = 200, headers: [String: String] = [:]) -> StubResponse {
        .status(status, headers: headers, body: body)
    }

    /// `text` as UTF-8, `Content-Type: text/plain; charset=utf-8` unless `headers` say otherwise.
    public static func text(_ text: String, status: Int = 200, headers: [String: String] = [:]) -> StubResponse {
        var headers = headers
        if !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            headers["Content-Type"] = "text/plain; charset=utf-8"
        }
        return .status(status, headers: headers, body: Data(text.utf8))
    }

    /// `value` encoded as JSON, `Content-Type: application/json`.
    public static func json(
        _ value: some Encodable, status: Int = 200, headers: [String: String] = [:], encoder: JSONEncoder = JSONEncoder()
    ) throws -> StubResponse {
        var headers = headers
        headers["Content-Type"] = headers["Content-Type"] ?? "application/json"
        return .status(status, headers: headers, body: try encoder.encode(value))
    }

    // MARK: Streamed bodies

    /// `pieces` one after another, `interval` apart (the head goes first,
    /// with no Content-Length unless `headers` give one).
    public static func chunks(
        _ pieces: [Data], every interval: Duration = .zero, status: Int = 200, headers: [String: String] = [:]
    ) -> StubResponse {
        StubResponse(plan: .respond(
            status: status, headers: headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) },
            body: .chunks(pieces, every: interval), thenFail: nil))
    }

    /// `piece` again and again, `interval` apart, until the task stops
    /// wanting it (a consumer that stops reading slows it: backpressure).
    public static func endless(
        _ piece: Data, every interval: Duration = .zero, status: Int = 200, headers: [String: String] = [:]
    ) -> StubResponse {
        precondition(!piece.isEmpty, "an endless body needs a non-empty piece")
        return StubResponse(plan: .respond(
            status: status, headers: headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) },
            body: .endless(piece, every: interval), thenFail: nil))
    }

    // MARK: Redirects and challenges

    /// A redirect to `location` (absolute or relative to the request).
    public static func redirect(to location: String, status: Int = 302, headers: [String: String] = [:]) -> StubResponse {
        var headers = headers
        headers["Location"] = location
        return .status(status, headers: headers)
    }

    /// A redirect to `location`, given as a URL.
    public static func redirect(to location: URL, status: Int = 302, headers: [String: String] = [:]) -> StubResponse {
        redirect(to: location.absoluteString, status: status, headers: headers)
    }

    /// A 401 asking for `scheme` credentials (407 with `proxy: true`).
    public static func challenge(scheme: String = "Basic", realm: String = "stub", proxy: Bool = false) -> StubResponse {
        .status(
            proxy ? 407 : 401,
            headers: [proxy ? "Proxy-Authenticate" : "WWW-Authenticate": "\(scheme) realm=\"\(realm)\""])
    }

    // MARK: Failures

    /// The request fails with `code` before any response.
    public static func failure(_ code: URLError.Code) -> StubResponse {
        StubResponse(plan: .fail(URLError(code)))
    }

    /// The request fails with `error` before any response.
    public static func failure(_ error: URLError) -> StubResponse {
        StubResponse(plan: .fail(error))
    }

    /// A head declaring `declaredLength` bytes, `sent` of them, then a
    /// failure (`.networkConnectionLost` by default): a server that dies
    /// mid-body.
    public static func failure(
        afterSending sent: Data, declaredLength: Int? = nil, status: Int = 200, headers: [String: String] = [:],
        error: URLError.Code = .networkConnectionLost
    ) -> StubResponse {
        var fields = headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        if let declaredLength { fields.append((name: "Content-Length", value: String(declaredLength))) }
        return StubResponse(plan: .respond(status: status, headers: fields, body: .whole(sent), thenFail: URLError(error)))
    }

    /// No answer at all: the task ends by its request timeout or a cancel.
    public static var never: StubResponse { StubResponse(plan: .silence) }

    /// This response with its head held back `delay` (a slow server).
    public func delayed(by delay: Duration) -> StubResponse {
        var copy = self
        copy.headDelay = delay
        return copy
    }
}
