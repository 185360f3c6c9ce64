import Foundation
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// A stub that runs its own authentication, as legacy stubs of login flows
/// do: `startLoading` sends a challenge with itself as the sender, and what
/// the sender is told decides the answer. alice/secret gets 200 "welcome
/// alice"; default handling or a rejected space gets 401 "no credential";
/// a cancel fails the load with `.userCancelledAuthentication`.
final class ChallengingStubProtocol: URLProtocol, URLAuthenticationChallengeSender, @unchecked Sendable {
    // @unchecked: instances are driven by the adapter; the sender calls come once per challenge.
    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.host == "challenging-stub.example"
    }

    override func startLoading() {
        let space = URLProtectionSpace(
            host: "challenging-stub.example", port: 443, protocol: "https", realm: "stub",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let challenge = URLAuthenticationChallenge(
            protectionSpace: space, proposedCredential: nil, previousFailureCount: 0, failureResponse: nil,
            error: nil, sender: self)
        client?.urlProtocol(self, didReceive: challenge)
    }

    override func stopLoading() {}

    private func answer(_ status: Int, _ text: String) {
        let response = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: nil)!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data(text.utf8))
        client?.urlProtocolDidFinishLoading(self)
    }

    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {
        if credential.user == "alice", credential.password == "secret" {
            answer(200, "welcome alice")
        } else {
            answer(403, "wrong credential")
        }
    }

    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) { answer(401, "no credential") }
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) { answer(401, "no credential") }
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) { answer(401, "no credential") }

    func cancel(_ challenge: URLAuthenticationChallenge) {
        client?.urlProtocol(self, didFailWithError: URLError(.userCancelledAuthentication))
    }
}

/// A delegate that cancels every challenge.
final class CancellingChallengeDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        completionHandler(.cancelAuthenticationChallenge, nil)
    }
}

/// A URLProtocol's `urlProtocol(_:didReceive:)` challenge goes to the
/// session's delegate, and the answer back to the challenge's sender.
@Suite struct URLProtocolChallengeTests {
    private func configuration() -> URLSessionConfiguration {
        let configuration = legacyConfiguration()
        configuration.protocolClasses = [ChallengingStubProtocol.self]
        return configuration
    }

    private let url = URL(string: "https://challenging-stub.example/login")!

    @Test(arguments: AnswerStyle.allCases)
    func delegateCredential_reachesTheProtocolsSender(style: AnswerStyle) async throws {
        let delegate = LegacyDelegate(
            style: style, credential: URLCredential(user: "alice", password: "secret", persistence: .none))
        let session = URLSession(configuration: configuration(), delegate: delegate, delegateQueue: nil)
        session.dataTask(with: url).resume()
        try await withTimeLimit { await delegate.completed.wait() }
        #expect(delegate.error == nil)
        #expect(delegate.calls.filter { $0 == "challenge" }.count == 1)
        #expect(String(decoding: delegate.body, as: UTF8.self) == "welcome alice")
        session.finishTasksAndInvalidate()
    }

    @Test func withoutADelegate_theProtocolIsToldDefaultHandling() async throws {
        let result = HandlerResult<Data>()
        URLSession(configuration: configuration()).dataTask(with: url) { result.set($0, $1, $2) }.resume()
        let (data, response, error) = try await withTimeLimit { await result.value() }
        #expect(error == nil)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(String(decoding: data ?? Data(), as: UTF8.self) == "no credential")
    }

    @Test func delegateCancel_reachesTheProtocol_whichFailsTheTask() async throws {
        let result = HandlerResult<Data>()
        URLSession(configuration: configuration(), delegate: CancellingChallengeDelegate(), delegateQueue: nil)
            .dataTask(with: url) { result.set($0, $1, $2) }.resume()
        let (_, _, error) = try await withTimeLimit { await result.value() }
        #expect((error as? URLError)?.code == .userCancelledAuthentication)
    }
}
