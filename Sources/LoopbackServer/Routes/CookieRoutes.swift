import NIOHTTP1

/// /cookies/set and /cookies/echo, for cookie storage tests.
enum CookieRoutes {
    /// GET /cookies/set?name=value&...: 200 with one `Set-Cookie: name=value; Path=/` per
    /// query pair, in order.
    static func set(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        var headers = HTTPHeaders()
        for (name, value) in try request.target.headerPairs(kind: "cookie") {
            headers.add(name: "Set-Cookie", value: "\(name)=\(value); Path=/")
        }
        return .text(.ok, "cookies set", headers: headers)
    }

    /// GET /cookies/echo: 200 whose body is the Cookie header received (empty without one).
    /// Several Cookie fields (HTTP/2 may split them) are joined with "; " as RFC 9113 says.
    static func echo(_ request: RequestInfo) -> ResponsePlan {
        .text(.ok, request.head.headers["cookie"].joined(separator: "; "))
    }
}
