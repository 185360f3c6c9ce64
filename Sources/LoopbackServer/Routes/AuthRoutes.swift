import Foundation
import NIOHTTP1

/// /auth/basic, /auth/digest, /auth/multi, /auth/ntlm, /auth/no-challenge, /auth/malformed,
/// /auth/basic-then-close and /proxy-auth.
///
/// Every 401 carries a fresh challenge, so a client that got the credentials wrong can try
/// again; how often it does shows in `LoopbackServer.authorizationAttempts`.
enum AuthRoutes {
    /// GET /auth/basic?user=U&password=P: 200 only with exactly those Basic credentials.
    static func basic(_ request: RequestInfo) -> ResponsePlan {
        let credentials = Credentials(request)
        if let authorization = credentials.authorization, credentials.basicMatches(authorization) {
            return .text(.ok, "authenticated as \(credentials.user)")
        }
        return unauthorized(challenges: [basicChallenge])
    }

    /// GET /auth/digest?user=U&password=P&realm=R: 200 only with a correct Digest (MD5,
    /// qop=auth) answer to a nonce this server issued.
    static func digest(_ request: RequestInfo) -> ResponsePlan {
        let credentials = Credentials(request)
        let realm = request.target.value("realm") ?? "loopback"
        let opaque = request.auth.opaque
        if let authorization = credentials.authorization,
            credentials.digestMatches(authorization, realm: realm, opaque: opaque, request: request)
        {
            return .text(.ok, "authenticated as \(credentials.user)")
        }
        return unauthorized(challenges: [Digest.challenge(realm: realm, opaque: opaque, state: request.auth)])
    }

    /// GET /auth/multi?user=U&password=P: a Digest and a Basic challenge (two WWW-Authenticate
    /// headers, Digest first); either correct answer gets 200.
    static func multi(_ request: RequestInfo) -> ResponsePlan {
        let credentials = Credentials(request)
        if let authorization = credentials.authorization,
            credentials.basicMatches(authorization)
                || credentials.digestMatches(authorization, realm: "loopback", opaque: nil, request: request)
        {
            return .text(.ok, "authenticated as \(credentials.user)")
        }
        let digest = Digest.challenge(realm: "loopback", opaque: nil, state: request.auth)
        return unauthorized(challenges: [digest, basicChallenge])
    }

    /// GET /auth/ntlm: always 401 offering NTLM, a connection-level method (no exchange is
    /// run: it shows where a client routes such a challenge).
    static func ntlm() -> ResponsePlan {
        unauthorized(challenges: ["NTLM"])
    }

    /// GET /auth/no-challenge: 401 without any WWW-Authenticate.
    static func noChallenge() -> ResponsePlan {
        unauthorized(challenges: [])
    }

    /// GET /auth/malformed: 401 whose WWW-Authenticate is not a challenge at all.
    static func malformed() -> ResponsePlan {
        unauthorized(challenges: [",,,=\""])
    }

    /// GET /auth/basic-then-close?user=U&password=P: a Basic challenge; any request with
    /// Authorization (right or wrong) gets no answer, the connection is closed (HTTP/1) or the
    /// stream reset (HTTP/2).
    static func basicThenClose(_ request: RequestInfo) -> ResponsePlan {
        guard request.head.headers.contains(name: "authorization") else {
            return unauthorized(challenges: [basicChallenge])
        }
        return .reset
    }

    /// GET /proxy-auth: always 407 with a Basic proxy challenge (nothing is proxied).
    static func proxy() -> ResponsePlan {
        var headers = HTTPHeaders()
        headers.add(name: "Proxy-Authenticate", value: "Basic realm=\"proxy\"")
        return .text(.proxyAuthenticationRequired, "proxy authentication required", headers: headers)
    }

    private static let basicChallenge = "Basic realm=\"loopback\""

    private static func unauthorized(challenges: [String]) -> ResponsePlan {
        var headers = HTTPHeaders()
        for challenge in challenges {
            headers.add(name: "WWW-Authenticate", value: challenge)
        }
        return .text(.unauthorized, "authentication required", headers: headers)
    }
}

/// The expected user and password (from the query) and the Authorization header sent.
private struct Credentials {
    let user: String
    let password: String
    let authorization: AuthorizationHeader?

    init(_ request: RequestInfo) {
        user = request.target.value("user") ?? ""
        password = request.target.value("password") ?? ""
        authorization = request.head.headers.first(name: "authorization").flatMap(AuthorizationHeader.init)
    }

    func basicMatches(_ authorization: AuthorizationHeader) -> Bool {
        guard authorization.hasScheme("Basic"),
            let decoded = Data(base64Encoded: String(authorization.rest))
        else { return false }
        return String(bytes: decoded, encoding: .utf8) == "\(user):\(password)"
    }

    func digestMatches(
        _ authorization: AuthorizationHeader,
        realm: String,
        opaque: String?,
        request: RequestInfo
    ) -> Bool {
        Digest.verify(
            authorization,
            user: user,
            password: password,
            realm: realm,
            opaque: opaque,
            method: request.head.method.rawValue,
            uri: request.head.uri,
            state: request.auth
        )
    }
}
