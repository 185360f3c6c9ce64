import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

/// Servers that lie, break the rules or go away: each case ends with a clear
/// error or a plain response, never a hang or a crash.
@Suite struct HostileServerTests {
    private func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// A bare CR or DEL inside the value, or an empty value. (A CR LF pair is
    /// not in this list: on the wire it simply ends the header line.)
    @Test(arguments: ["/x\r/y", "/x\u{7F}y", ""])
    func unusableLocation_makesTheRedirectTheResult(location: String) async throws {
        try await withServer { server in
            let percentEncodedRaw = location.utf8.map { String(format: "%%%02X", $0) }.joined()
            let task = Session(configuration: testConfiguration())
                .dataTask(with: server.url("/redirect-raw?status=302&location=\(percentEncodedRaw)"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.redirects.isEmpty, "a Location that is not a URL is never followed")
            #expect(recorded.response?.statusCode == 302)
        }
    }

    @Test func schemeRelativeLocation_isFollowedOnTheSameScheme() async throws {
        try await withServer { server in
            let location = encoded("//127.0.0.1:\(server.port)/bytes/4")
            let (data, response) = try await Session(configuration: testConfiguration())
                .data(from: server.url("/redirect-raw?status=301&location=\(location)"))
            #expect(response.url?.path == "/bytes/4")
            #expect(data == LoopbackServer.patternBody(count: 4))
        }
    }

    @Test func redirectWithoutLocation_isTheResult() async throws {
        try await withServer { server in
            let (_, response) = try await Session(configuration: testConfiguration())
                .data(from: server.url("/redirect-no-location?status=302"))
            #expect((response as? HTTPURLResponse)?.statusCode == 302)
        }
    }

    @Test(arguments: ["/auth/no-challenge", "/auth/malformed"])
    func unauthorizedWithoutUsableChallenge_isAPlainResponse(path: String) async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url(path))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.challenges.isEmpty)
            #expect(recorded.response?.statusCode == 401)
        }
    }

    @Test func serverClosingDuringTheAuthExchange_failsCleanly() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration())
                .dataTask(with: server.url("/auth/basic-then-close?user=a&password=b"))
            task.resume()
            var challenges = 0
            var failure: (any Error)?
            do {
                for try await event in task.events {
                    if case .challenge(let decision) = event {
                        challenges += 1
                        decision.useCredential(URLCredential(user: "a", password: "b", persistence: .none))
                    }
                }
            } catch {
                failure = error
            }
            #expect(challenges == 1)
            #expect(failure?.urlErrorCode == .networkConnectionLost)
        }
    }

    @Test func digestChallenge_answeredWithCredential_isPerformedByLibcurl() async throws {
        final class Answer: SessionTaskDelegate {
            func task(_ task: SessionTask, didReceive challenge: ChallengeDecision) async {
                #expect(challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPDigest)
                #expect(challenge.protectionSpace.realm == "vault")
                challenge.useCredential(URLCredential(user: "ann", password: "s3cret", persistence: .none))
            }
        }
        try await withServer { server in
            let (data, response) = try await Session(configuration: testConfiguration())
                .data(from: server.url("/auth/digest?user=ann&password=s3cret&realm=vault"), delegate: Answer())
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "authenticated as ann")
        }
    }

    @Test func rejectingTheFirstOfferedMethod_offersTheNext() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/auth/multi?user=ann&password=pw"))
            task.resume()
            var offered: [String] = []
            var status = 0
            for try await event in task.events {
                switch event {
                case .challenge(let decision):
                    offered.append(decision.protectionSpace.authenticationMethod)
                    if decision.protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPDigest {
                        decision.rejectProtectionSpace()
                    } else {
                        decision.useCredential(URLCredential(user: "ann", password: "pw", persistence: .none))
                    }
                case .response(let response, _): status = response.statusCode
                default: break
                }
            }
            #expect(offered == [NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodHTTPBasic])
            #expect(status == 200)
        }
    }

    @Test func proxyChallengeWithoutAProxy_isOfferedThenTheResult() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/proxy-auth"))
            task.resume()
            var realms: [String?] = []
            var status = 0
            for try await event in task.events {
                switch event {
                case .challenge(let decision):
                    realms.append(decision.protectionSpace.realm)
                    decision.useCredential(URLCredential(user: "p", password: "q", persistence: .none))
                case .response(let response, _): status = response.statusCode
                default: break
                }
            }
            #expect(realms == ["proxy"])
            #expect(status == 407)
        }
    }

    @Test func wrongCredentialsAreRetriedABoundedNumberOfTimes() async throws {
        final class Wrong: SessionTaskDelegate {
            func task(_ task: SessionTask, didReceive challenge: ChallengeDecision) async {
                challenge.useCredential(URLCredential(user: "ann", password: "wrong", persistence: .none))
            }
        }
        try await withServer { server in
            let (_, response) = try await Session(configuration: testConfiguration())
                .data(from: server.url("/auth/digest?user=ann&password=pw"), delegate: Wrong())
            #expect((response as? HTTPURLResponse)?.statusCode == 401)
            #expect(server.authorizationAttempts <= 10)
        }
    }
}
