import AsyncURLSession
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// What the classic and OpenAPI adapters are built on, used as any code
/// offering another API over a session would (Adapters.md).
@Suite struct AdapterAPITests {
    @Test func nextEvent_pullsTheEvents_oneAwaitAtATime() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/3000"))
            task.resume()
            var kinds: [String] = []
            var body = 0
            while let event = try await task.nextEvent() {
                switch event {
                case .response: kinds.append("response")
                case .data(let chunk): body += chunk.count
                case .metrics: kinds.append("metrics")
                default: break
                }
            }
            #expect(kinds == ["response", "metrics"])
            #expect(body == 3000)
        }
    }

    @Test func whenCollectionEnds_thenTakeCollectedResult_withNoSwiftTaskWaiting() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/2000"))
            #expect(task.collectBody())
            let ended = Signal()
            task.whenCollectionEnds { ended.fire() }
            task.resume()
            await ended.wait()
            let (body, response) = try task.takeCollectedResult().get()
            #expect(body.count == 2000)
            #expect(response.statusCode == 200)
        }
    }

    @Test func refusedTask_failsWithTheGivenError_sendingNothing() async throws {
        try await withServer { server in
            let refusal = URLError(.unsupportedURL, userInfo: [NSLocalizedDescriptionKey: "not through this API"])
            let task = Session(configuration: testConfiguration()).refusedTask(for: URLRequest(url: server.url("/bytes/1")), error: refusal)
            task.resume()
            let recorded = await record(task)
            #expect((recorded.error as? URLError)?.localizedDescription == "not through this API")
            #expect(server.acceptedConnections == 0)
        }
    }
}
