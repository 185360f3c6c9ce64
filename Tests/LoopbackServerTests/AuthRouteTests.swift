import Foundation
import LoopbackServer
import Testing

/// The /auth routes and /proxy-auth, with the curl command line (libcurl's Digest, Basic and
/// --anyauth) as the client.
@Suite(.timeLimit(.scaledMinutes(1))) struct AuthRouteTests {
    @Test(arguments: [false, true])
    func digestAcceptsCorrectCredentials(http2: Bool) async throws {
        try await withServer(http2: http2) { server, reach in
            let result = try await curl(
                reach + ["--digest", "-u", "alice:secret", "-w", "%{http_code} %{http_version}"],
                url: server.url("/auth/digest?user=alice&password=secret&realm=my%20realm")
            )
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(result.writeOut == (http2 ? "200 2" : "200 1.1"))
            #expect(String(decoding: result.body, as: UTF8.self) == "authenticated as alice")

            let challenges = result.headerValues("www-authenticate")
            #expect(challenges.count == 1)
            let challenge = try #require(challenges.first)
            #expect(challenge.hasPrefix("Digest realm=\"my realm\", qop=\"auth\", nonce=\""), "\(challenge)")
            #expect(challenge.contains(", opaque=\""), "\(challenge)")
            #expect(challenge.hasSuffix(", algorithm=MD5"), "\(challenge)")
            #expect(server.authorizationAttempts == 1)
        }
    }

    @Test func digestRefusesWrongPasswordWithAFreshChallenge() async throws {
        try await withServer { server in
            let result = try await curl(
                ["--digest", "-u", "alice:wrong", "-w", "%{http_code}"],
                url: server.url("/auth/digest?user=alice&password=secret")
            )
            #expect(result.writeOut == "401")
            let nonces = result.headerValues("www-authenticate").compactMap { challenge in
                challenge.range(of: "nonce=\"").map { challenge[$0.upperBound...].prefix(64) }
            }
            #expect(nonces.count == 2, "one challenge per 401")
            #expect(Set(nonces).count == 2, "every challenge has its own nonce")
            #expect(result.headerValues("www-authenticate").allSatisfy { $0.hasPrefix("Digest realm=\"loopback\"") })
            // curl answers the first challenge, then gives up: one request carried credentials.
            #expect(server.authorizationAttempts == 1)

            for garbage in ["Digest =", "Digest username=\"alice", ",,,", "Digest"] {
                let refused = try await curl(
                    ["-H", "Authorization: \(garbage)", "-w", "%{http_code}"],
                    url: server.url("/auth/digest?user=alice&password=secret")
                )
                #expect(refused.writeOut == "401", "\(garbage)")
            }
            #expect(server.authorizationAttempts == 5)
        }
    }

    @Test func multiOffersDigestAndBasic() async throws {
        try await withServer { server in
            let url = server.url("/auth/multi?user=bob&password=pw")
            let anonymous = try await curl(["-w", "%{http_code}"], url: url)
            #expect(anonymous.writeOut == "401")
            let challenges = anonymous.headerValues("www-authenticate")
            #expect(challenges.count == 2)
            #expect(challenges.first?.hasPrefix("Digest realm=\"loopback\", qop=\"auth\", nonce=\"") == true)
            #expect(challenges.first?.hasSuffix(", algorithm=MD5") == true)
            #expect(challenges.last == "Basic realm=\"loopback\"")

            for scheme in ["--basic", "--digest", "--anyauth"] {
                let result = try await curl([scheme, "-u", "bob:pw", "-w", "%{http_code}"], url: url)
                #expect(result.writeOut == "200", "\(scheme)")
                #expect(String(decoding: result.body, as: UTF8.self) == "authenticated as bob", "\(scheme)")
            }
            let wrong = try await curl(["--basic", "-u", "bob:nope", "-w", "%{http_code}"], url: url)
            #expect(wrong.writeOut == "401")
        }
    }

    @Test func authorizationAttemptsCountsAuthRoutesOnly() async throws {
        try await withServer { server in
            _ = try await curl(["-w", "%{http_code}"], url: server.url("/auth/basic?user=a&password=b"))
            #expect(server.authorizationAttempts == 0, "no Authorization header")
            _ = try await curl(["-u", "a:b"], url: server.url("/echo"))
            #expect(server.authorizationAttempts == 0, "not an /auth route")
            let wrong = try await curl(["-u", "a:x", "-w", "%{http_code}"], url: server.url("/auth/basic?user=a&password=b"))
            #expect(wrong.writeOut == "401")
            let right = try await curl(["-u", "a:b", "-w", "%{http_code}"], url: server.url("/auth/basic?user=a&password=b"))
            #expect(right.writeOut == "200")
            #expect(server.authorizationAttempts == 2)
        }
    }

    @Test func noChallengeAndMalformedChallenge() async throws {
        try await withServer { server in
            let none = try await curl(["--anyauth", "-u", "a:b", "-w", "%{http_code}"], url: server.url("/auth/no-challenge"))
            #expect(none.exitCode == 0, "\(none.stderr)")
            #expect(none.writeOut == "401")
            #expect(none.headerValues("www-authenticate").isEmpty)

            let garbage = try await curl(["--anyauth", "-u", "a:b", "-w", "%{http_code}"], url: server.url("/auth/malformed"))
            #expect(garbage.exitCode == 0, "\(garbage.stderr)")
            #expect(garbage.writeOut == "401")
            #expect(garbage.headerValues("www-authenticate") == [",,,=\""])
        }
    }

    @Test(arguments: [false, true])
    func basicThenCloseAnswersNoCredentials(http2: Bool) async throws {
        try await withServer(http2: http2) { server, reach in
            let url = server.url("/auth/basic-then-close?user=a&password=b")
            let anonymous = try await curl(reach + ["-w", "%{http_code}"], url: url)
            #expect(anonymous.writeOut == "401")
            #expect(anonymous.headerValues("www-authenticate") == ["Basic realm=\"loopback\""])

            let answered = try await curl(reach + ["--basic", "-u", "a:b", "-w", "%{http_code}"], url: url)
            // 52: empty reply (connection closed); 92: HTTP/2 stream not closed cleanly.
            #expect(answered.exitCode == (http2 ? 92 : 52), "\(answered.stderr)")
            #expect(answered.writeOut == "000")
            #expect(server.authorizationAttempts == 1)
        }
    }

    @Test func proxyAuthIs407WithAProxyChallenge() async throws {
        try await withServer { server in
            let result = try await curl(["-w", "%{http_code}"], url: server.url("/proxy-auth"))
            #expect(result.writeOut == "407")
            #expect(result.headerValues("proxy-authenticate") == ["Basic realm=\"proxy\""])
            #expect(result.headerValues("www-authenticate").isEmpty)
        }
    }
}
