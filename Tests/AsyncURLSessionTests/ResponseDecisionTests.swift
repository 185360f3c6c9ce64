import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

@Suite struct ResponseDecisionTests {
    @Test func cancelAnswer_endsTheTaskWithCancelled() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/\(8 << 20)"))
            task.resume()
            var received = 0
            do {
                for try await event in task.events {
                    switch event {
                    case .response(_, let decision): decision.cancel()
                    case .data(let chunk): received += chunk.count
                    default: break
                    }
                }
                Issue.record("expected an error")
            } catch {
                #expect(error.urlErrorCode == .cancelled)
            }
            #expect(received < 8 << 20)
        }
    }

    /// Bug: a small body arrives whole while the decision waits; answering
    /// cancel then was ignored and the body delivered.
    @Test func cancelAnswer_afterTheWholeBodyArrived_stillDeliversNoBody() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/1000"))
            task.resume()
            var received = 0
            do {
                for try await event in task.events {
                    switch event {
                    case .response(_, let decision):
                        // Bounded by the test's time limit.
                        while task.state != .completed { try await Task.sleep(for: .milliseconds(2)) }
                        decision.cancel()
                    case .data(let chunk): received += chunk.count
                    default: break
                    }
                }
                Issue.record("expected an error")
            } catch {
                #expect(error.urlErrorCode == .cancelled)
            }
            #expect(received == 0)
            #expect(task.error?.urlErrorCode == .cancelled)
        }
    }

    @Test func unansweredDecision_allowsByDefault() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/1000"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.body.count == 1000)
        }
    }

    @Test func delegateCancel_stopsDataForBeforeTheBody() async throws {
        final class Refuse: SessionTaskDelegate {
            func task(_ task: SessionTask, didReceive response: HTTPURLResponse, decision: ResponseDecision) async {
                if response.statusCode == 200 { decision.cancel() }
            }
        }
        try await withServer { server in
            await #expect(throws: URLError.self) {
                _ = try await Session(configuration: testConfiguration())
                    .data(from: server.url("/bytes/\(4 << 20)"), delegate: Refuse())
            }
        }
    }

    @Test func delegateAllow_deliversTheWholeBodyInOrder() async throws {
        final class SlowAllow: SessionTaskDelegate {
            func task(_ task: SessionTask, didReceive response: HTTPURLResponse, decision: ResponseDecision) async {
                try? await Task.sleep(for: .milliseconds(100))
                decision.allow()
            }
        }
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/bytes/300000"), delegate: SlowAllow())
            task.resume()
            let recorded = await record(task)
            #expect(recorded.kinds == ["response", "data", "metrics"])
            #expect(recorded.body == LoopbackServer.patternBody(count: 300_000))
        }
    }

    @Test func delegateOnEmptyBody_stillEndsAfterTheResponse() async throws {
        final class SlowAllow: SessionTaskDelegate {
            func task(_ task: SessionTask, didReceive response: HTTPURLResponse, decision: ResponseDecision) async {
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/0"), delegate: SlowAllow())
            task.resume()
            let recorded = await record(task)
            #expect(recorded.kinds == ["response", "metrics"])
        }
    }
}
