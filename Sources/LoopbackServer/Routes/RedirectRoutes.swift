import NIOCore
import NIOHTTP1

/// /redirect/N, /redirect-to, /redirect-loop, /redirect-no-location, /redirect-echo and
/// /cross-origin-redirect (/redirect-raw is in RawRedirectRoute.swift).
enum RedirectRoutes {
    /// GET /redirect/N: a chain of N relative 302s ending in 200 "done".
    static func redirect(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let remaining = try request.target.integerSegment(1, named: "N")
        guard remaining > 0 else {
            return .text(.ok, "done")
        }
        return redirecting(status: .found, location: "/redirect/\(remaining - 1)")
    }

    /// ANY /redirect-to?status=S&location=L&cookie=C: status S (default 302), Location exactly
    /// L, and with `cookie` a `Set-Cookie: C` on the redirect itself.
    static func redirectTo(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let code = try request.target.integer("status", default: 302, in: 200...599)
        guard let location = request.target.value("location") else {
            throw BadRequest(message: "location is required")
        }
        let cookie = try request.target.value("cookie").map { value throws(BadRequest) in try headerSafe(value, named: "cookie") }
        return redirecting(
            status: HTTPResponseStatus(statusCode: code), location: try headerSafe(location, named: "location"),
            setCookie: cookie)
    }

    /// GET /redirect-loop: redirects to itself forever.
    static func loop() -> ResponsePlan {
        redirecting(status: .found, location: "/redirect-loop")
    }

    /// GET /redirect-no-location?status=S: status S (default 302) without a Location header.
    static func noLocation(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let code = try request.target.integer("status", default: 302, in: 200...599)
        return .text(HTTPResponseStatus(statusCode: code), "redirecting nowhere")
    }

    /// ANY /redirect-echo?status=S&to=PATH: S (301, 302, 303, 307 or 308; default 302) to
    /// PATH (default /echo). Like every `.respond` route it answers only once the whole
    /// request body has been read, so the client may send it again after a 307 or 308.
    static func redirectEcho(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let code = try request.target.integer("status", default: 302, in: 301...308)
        guard [301, 302, 303, 307, 308].contains(code) else {
            throw BadRequest(message: "status must be 301, 302, 303, 307 or 308, got \(code)")
        }
        let location = try headerSafe(request.target.value("to") ?? "/echo", named: "to")
        return redirecting(status: HTTPResponseStatus(statusCode: code), location: location)
    }

    /// GET /cross-origin-redirect?port=P&path=PATH&status=S: S (default 302) to
    /// http://127.0.0.1:P/PATH (PATH default /echo), typically another server's /echo, to see
    /// which credentials a client carries to another origin.
    static func crossOrigin(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        guard let portText = request.target.value("port") else {
            throw BadRequest(message: "port is required")
        }
        let port = try RequestTarget.integer(portText, named: "port", in: 1...65_535)
        let code = try request.target.integer("status", default: 302, in: 300...399)
        let path = try headerSafe(request.target.value("path") ?? "/echo", named: "path")
        let location = "http://127.0.0.1:\(port)" + (path.hasPrefix("/") ? path : "/" + path)
        return redirecting(status: HTTPResponseStatus(statusCode: code), location: location)
    }

    private static func redirecting(status: HTTPResponseStatus, location: String, setCookie: String? = nil) -> ResponsePlan {
        var headers = HTTPHeaders()
        headers.add(name: "Location", value: location)
        if let setCookie { headers.add(name: "Set-Cookie", value: setCookie) }
        return .text(status, "redirecting", headers: headers)
    }

    /// `value` if it can be a header value; CR, LF or NUL would make NIO's encoder fail the
    /// connection, so they get a 400 (only /redirect-raw sends them).
    private static func headerSafe(_ value: String, named name: String) throws(BadRequest) -> String {
        guard HTTPSyntax.isSendableHeaderValue(value) else {
            throw BadRequest(message: "\(name) must not contain CR, LF or NUL")
        }
        return value
    }
}
