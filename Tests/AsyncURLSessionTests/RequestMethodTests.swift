import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Methods other than GET, HEAD and POST, and bodies that must be sent twice.
@Suite struct RequestMethodTests {
    /// The second request reuses the first one's connection and easy handle,
    /// which had a 300 KB body to send: none of that may stick to a method
    /// sent without a body.
    @Test(arguments: ["DELETE", "OPTIONS", "PATCH"])
    func methodWithoutBody_sendsNoBody_afterAPostOnTheSameSession(method: String) async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            var post = URLRequest(url: server.url("/echo"))
            post.httpMethod = "POST"
            post.httpBody = LoopbackServer.patternBody(count: 300_000)
            _ = try await session.data(for: post)

            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = method
            let (data, response) = try await session.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.method == method)
            #expect(echo.bodyLength == 0)
            #expect((echo.value(of: "content-length") ?? "0") == "0")
            #expect(echo.value(of: "transfer-encoding") == nil)
        }
    }

    /// Digest needs the server's challenge first: the body goes out with
    /// the request that gets the 401 and again with the answer.
    @Test func postBody_isSentAgainWithTheDigestAnswer() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            var request = URLRequest(url: server.url("/auth/digest?user=ann&password=pw"))
            request.httpMethod = "POST"
            request.httpBody = LoopbackServer.patternBody(count: 300_000)
            let task = session.dataTask(with: request)
            task.resume()
            var status = 0
            var body = Data()
            for try await event in task.events {
                switch event {
                case .challenge(let decision):
                    decision.useCredential(URLCredential(user: "ann", password: "pw", persistence: .none))
                case .response(let response, _): status = response.statusCode
                case .data(let chunk): body.append(chunk)
                default: break
                }
            }
            #expect(status == 200)
            #expect(String(decoding: body, as: UTF8.self) == "authenticated as ann")
            #expect(task.countOfBytesSent >= 300_000)
        }
    }
}
