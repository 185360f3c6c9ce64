import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A responder that authenticates by itself (`LocalResponseWriter.challenge`)
/// asks the task's challenge handling, and gets the answer back.
@Suite struct LocalChallengeTests {
    /// Answers with what the challenge was answered: "user NAME", "default", "reject".
    private struct AskingTransport: LocalTransport {
        struct Responder: LocalResponder {
            func respond(to request: LocalRequest, through writer: LocalResponseWriter) async throws(URLError) {
                let space = URLProtectionSpace(
                    host: "local.test", port: 80, protocol: "http", realm: "r",
                    authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
                let text: String
                switch try await writer.challenge(protectionSpace: space) {
                case .useCredential(let credential): text = "user \(credential.user ?? "")"
                case .performDefaultHandling: text = "default"
                case .rejectProtectionSpace: text = "reject"
                case .cancel: throw URLError(.userCancelledAuthentication)
                }
                try await writer.writeHead(statusCode: 200)
                try await writer.writeBody(Data(text.utf8))
            }
        }

        func responder(for request: LocalRequest) -> (any LocalResponder)? { Responder() }
    }

    private func task() -> SessionTask {
        var configuration = testConfiguration()
        configuration.localTransport = AskingTransport()
        return Session(configuration: configuration).dataTask(with: URL(string: "http://local.test/")!)
    }

    @Test func eventsConsumerAnswer_reachesTheResponder() async throws {
        try await withTimeLimit {
            let task = task()
            task.resume()
            var body = Data()
            var challenges = 0
            for try await event in task.events {
                switch event {
                case .challenge(let decision):
                    challenges += 1
                    #expect(decision.protectionSpace.realm == "r")
                    #expect(decision.failureResponse?.statusCode == 401)
                    decision.useCredential(URLCredential(user: "bob", password: "pw", persistence: .none))
                case .data(let chunk): body.append(chunk)
                default: break
                }
            }
            #expect(challenges == 1)
            #expect(String(decoding: body, as: UTF8.self) == "user bob")
        }
    }

    @Test func collectingCaller_getsDefaultHandling() async throws {
        try await withTimeLimit {
            var configuration = testConfiguration()
            configuration.localTransport = AskingTransport()
            let (data, _) = try await Session(configuration: configuration).data(from: URL(string: "http://local.test/")!)
            #expect(String(decoding: data, as: UTF8.self) == "default")
        }
    }

    @Test func cancellingTheTask_whileTheChallengeWaits_endsIt() async throws {
        try await withTimeLimit {
            let task = task()
            task.resume()
            var error: URLError?
            do {
                for try await event in task.events {
                    if case .challenge = event { task.cancel() }
                }
            } catch let failure as URLError {
                error = failure
            }
            #expect(error?.code == .cancelled)
        }
    }
}
