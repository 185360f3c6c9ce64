import NIOHTTP1

/// /redirect/N, /redirect-to and /redirect-loop.
enum RedirectRoutes {
    /// GET /redirect/N: a chain of N relative 302s ending in 200 "done".
    static func redirect(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let remaining = try request.target.integerSegment(1, named: "N")
        guard remaining > 0 else {
            return .text(.ok, "done")
        }
        return redirecting(status: .found, location: "/redirect/\(remaining - 1)")
    }

    /// ANY /redirect-to?status=S&location=L: status S (default 302), Location exactly L.
    static func redirectTo(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let code = try request.target.integer("status", default: 302, in: 200...599)
        guard let location = request.target.value("location") else {
            throw BadRequest(message: "location is required")
        }
        guard !location.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw BadRequest(message: "location must not contain CR, LF or NUL")
        }
        return redirecting(status: HTTPResponseStatus(statusCode: code), location: location)
    }

    /// GET /redirect-loop: redirects to itself forever.
    static func loop() -> ResponsePlan {
        redirecting(status: .found, location: "/redirect-loop")
    }

    private static func redirecting(status: HTTPResponseStatus, location: String) -> ResponsePlan {
        var headers = HTTPHeaders()
        headers.add(name: "Location", value: location)
        return .text(status, "redirecting", headers: headers)
    }
}
