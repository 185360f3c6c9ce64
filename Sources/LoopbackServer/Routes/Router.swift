import NIOHTTP1

/// What to do with a request once its head is known.
enum Route {
    /// Answer with this plan once the request has ended; its body (if any) is discarded.
    case respond(ResponsePlan)
    /// /echo: hash the body as it arrives, answer with JSON at its end.
    case echo(EchoDigest)
    /// /echo-body: collect the body, send it back at its end.
    case echoBody(BodyCollector)
    /// /duplex-echo: the body streams back as it arrives, and the response may end first.
    case duplexEcho(DuplexEcho)
}

/// Maps a request head to its route. Every route accepts any method; HEAD gets the GET head
/// without the body. Unknown paths get 404, malformed numbers or parameters 400.
enum Router {
    static func route(_ request: RequestInfo) -> Route {
        // Counted here, once per request head, so every /auth route counts alike (even one
        // that answers by closing the connection).
        if request.target.segments.first == "auth", request.head.headers.contains(name: "authorization") {
            request.auth.countAuthorizationAttempt()
        }
        do {
            return try dispatch(request)
        } catch {
            return .respond(.text(.badRequest, "bad request: \(error.message)\n"))
        }
    }

    private static func dispatch(_ request: RequestInfo) throws(BadRequest) -> Route {
        let target = request.target
        let segments = target.segments
        switch (segments.first ?? "", segments.count) {
        case ("bytes", 2):
            return .respond(try ByteRoutes.bytes(request))
        case ("gzip", 2):
            return .respond(try ByteRoutes.gzip(request))
        case ("gzip-bomb", 2):
            return .respond(try ByteRoutes.gzipBomb(request))
        case ("chunked", 2):
            return .respond(try ByteRoutes.chunked(request))
        case ("drip", 2):
            return .respond(try ByteRoutes.drip(request))
        case ("stall", 2):
            return .respond(try ByteRoutes.stall(request))
        case ("stall-headers", 1):
            return .respond(.never)
        case ("drop", 2):
            return .respond(try ByteRoutes.drop(request))
        case ("close-delimited", 2):
            return .respond(try ByteRoutes.closeDelimited(request))
        case ("range", 2):
            return .respond(try RangeRoute.respond(request))
        case ("delay", 2):
            return .respond(try MiscRoutes.delay(request))
        case ("close-idle", 2):
            return .respond(try MiscRoutes.closeIdle(request))
        case ("status", 2):
            return .respond(try MiscRoutes.status(request))
        case ("flaky", 2):
            return .respond(try FlakyRoute.respond(request))
        case ("echo", 1):
            return .echo(EchoDigest())
        case ("echo-body", 1):
            return .echoBody(BodyCollector())
        case ("duplex-echo", 1):
            return .duplexEcho(try DuplexEcho(request))
        case ("redirect", 2):
            return .respond(try RedirectRoutes.redirect(request))
        case ("redirect-to", 1):
            return .respond(try RedirectRoutes.redirectTo(request))
        case ("redirect-loop", 1):
            return .respond(RedirectRoutes.loop())
        case ("redirect-raw", 1):
            return .respond(try RawRedirectRoute.respond(request))
        case ("redirect-no-location", 1):
            return .respond(try RedirectRoutes.noLocation(request))
        case ("redirect-echo", 1):
            return .respond(try RedirectRoutes.redirectEcho(request))
        case ("cross-origin-redirect", 1):
            return .respond(try RedirectRoutes.crossOrigin(request))
        case ("multipart-replace", 1):
            return .respond(try MultipartRoute.respond(request))
        case ("cookies", 2) where segments[1] == "set":
            return .respond(try CookieRoutes.set(request))
        case ("cookies", 2) where segments[1] == "echo":
            return .respond(CookieRoutes.echo(request))
        case ("cache", 1):
            return .respond(try CacheRoute.respond(request))
        case ("connection", 1):
            return .respond(.text(.ok, "\(request.connectionID)"))
        case ("trailers", 1):
            return .respond(try MiscRoutes.trailers(request))
        case ("response-headers", 1):
            return .respond(try MiscRoutes.responseHeaders(request))
        case ("auth", 2) where segments[1] == "basic":
            return .respond(AuthRoutes.basic(request))
        case ("auth", 2) where segments[1] == "digest":
            return .respond(AuthRoutes.digest(request))
        case ("auth", 2) where segments[1] == "multi":
            return .respond(AuthRoutes.multi(request))
        case ("auth", 2) where segments[1] == "ntlm":
            return .respond(AuthRoutes.ntlm())
        case ("auth", 2) where segments[1] == "no-challenge":
            return .respond(AuthRoutes.noChallenge())
        case ("auth", 2) where segments[1] == "malformed":
            return .respond(AuthRoutes.malformed())
        case ("auth", 2) where segments[1] == "basic-then-close":
            return .respond(AuthRoutes.basicThenClose(request))
        case ("proxy-auth", 1):
            return .respond(AuthRoutes.proxy())
        case ("garbage", 1):
            return .respond(request.transport == .http1 ? .garbage : .reset)
        case ("headers", 2) where segments[1] == "big":
            return .respond(try MiscRoutes.bigHeader(request))
        default:
            return .respond(.text(.notFound, "not found: \(target.path)\n"))
        }
    }
}
