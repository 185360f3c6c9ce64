import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

@Suite struct ChallengeTests {
    @Test func basicChallenge_answeredWithCredential_retriesAndSucceeds() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/auth/basic?user=ann&password=pw"))
            task.resume()
            var kinds: [String] = []
            var body = Data()
            for try await event in task.events {
                switch event {
                case .challenge(let decision):
                    kinds.append("challenge")
                    #expect(decision.protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPBasic)
                    #expect(decision.protectionSpace.realm == "loopback")
                    #expect(decision.previousFailureCount == 0)
                    #expect(decision.failureResponse?.statusCode == 401)
                    #expect(!decision.isConnectionLevel)
                    decision.useCredential(URLCredential(user: "ann", password: "pw", persistence: .none))
                case .response(let response, _):
                    kinds.append("response")
                    #expect(response.statusCode == 200)
                case .data(let chunk): body.append(chunk)
                default: break
                }
            }
            #expect(kinds == ["challenge", "response"])
            #expect(String(decoding: body, as: UTF8.self) == "authenticated as ann")
        }
    }

    @Test func noCredential_defaultHandlingMakesThe401TheResult() async throws {
        try await withServer { server in
            let (_, response) = try await Session(configuration: testConfiguration())
                .data(from: server.url("/auth/basic?user=ann&password=pw"))
            #expect((response as? HTTPURLResponse)?.statusCode == 401)
        }
    }

    @Test func userAndPasswordInTheURL_answerByDefault() async throws {
        try await withServer { server in
            let url = URL(string: "http://ann:pw@127.0.0.1:\(server.port)/auth/basic?user=ann&password=pw")!
            let (data, response) = try await Session(configuration: testConfiguration()).data(from: url)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "authenticated as ann")
        }
    }

    @Test func wrongCredential_isChallengedAgainWithAFailureCount_thenBounded() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/auth/basic?user=ann&password=pw"))
            task.resume()
            var counts: [Int] = []
            var status = 0
            for try await event in task.events {
                switch event {
                case .challenge(let decision):
                    counts.append(decision.previousFailureCount)
                    decision.useCredential(URLCredential(user: "ann", password: "wrong", persistence: .none))
                case .response(let response, _): status = response.statusCode
                default: break
                }
            }
            #expect(counts == [0, 1, 2, 3, 4])
            #expect(status == 401)
        }
    }

    @Test func cancellingTheChallenge_endsWithCancelled() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/auth/basic?user=a&password=b"))
            task.resume()
            do {
                for try await event in task.events {
                    if case .challenge(let decision) = event { decision.cancel() }
                }
                Issue.record("expected an error")
            } catch {
                #expect(error.urlErrorCode == .cancelled)
            }
        }
    }

    @Test func rejectingTheOnlyProtectionSpace_makesThe401TheResult() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/auth/basic?user=a&password=b"))
            task.resume()
            var status = 0
            for try await event in task.events {
                switch event {
                case .challenge(let decision): decision.rejectProtectionSpace()
                case .response(let response, _): status = response.statusCode
                default: break
                }
            }
            #expect(status == 401)
        }
    }

    @Test func credentialRememberedForSession_answersTheNextTaskByDefault() async throws {
        final class Answer: SessionTaskDelegate {
            func task(_ task: SessionTask, didReceive challenge: ChallengeDecision) async {
                challenge.useCredential(URLCredential(user: "ann", password: "pw", persistence: .forSession))
            }
        }
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let url = server.url("/auth/basic?user=ann&password=pw")
            let (_, first) = try await session.data(from: url, delegate: Answer())
            #expect((first as? HTTPURLResponse)?.statusCode == 200)
            let (_, second) = try await session.data(from: url)
            #expect((second as? HTTPURLResponse)?.statusCode == 200)
        }
    }

    @Test func credentialSetOnTheSession_answersByDefault() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let space = URLProtectionSpace(
                host: "127.0.0.1", port: server.port, protocol: "http", realm: "loopback",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
            session.setCredential(URLCredential(user: "ann", password: "pw", persistence: .forSession), for: space)
            let (_, response) = try await session.data(from: server.url("/auth/basic?user=ann&password=pw"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
        }
    }

    @Test func unauthorizedWithoutChallengeHeader_isAPlainResponse() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/status/401"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.kinds == ["response", "data", "metrics"])
            #expect(recorded.response?.statusCode == 401)
        }
    }
}
