import AsyncURLSession
import AsyncURLSessionTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Middleware and retries over the stub transport, as a user's own tests
/// run them: the same as over the network.
@Suite struct MiddlewareStubTests {
    @Test func stubsSeeTheSignedRequest_andA503IsRetried() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.path("/flaky"), sequence: [.status(503), .text("ok")])
            var configuration = testConfiguration()
            configuration.localTransport = stubs
            configuration.middleware = [MiddlewareTests.Signer()]
            configuration.retryPolicy = RetryPolicy(initialBackoff: 0.01, jitter: 0)
            let (data, response) = try await Session(configuration: configuration)
                .data(from: URL(string: "https://api.example.com/flaky")!)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "ok")
            #expect(stubs.requests.map { $0.headerFields["X-Signature"] } == ["sig-1", "sig-2"])
        }
    }
}
