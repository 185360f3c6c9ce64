import Foundation
import LoopbackServer
import Testing

@testable import AsyncURLSession

/// A task's core is freed once nobody holds the task, even when a response
/// decision (which holds the core, see `makeResponseDecision`) was left
/// unanswered or undelivered.
@Suite struct TaskReleaseTests {
    @Test func droppedAfterItsResponse_unanswered_isFreed() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            weak var core: TaskCore?
            do {
                let task = session.dataTask(with: server.url("/bytes/200000"))
                core = task.core
                task.resume()
                for try await event in task.events {
                    if case .response = event { break }  // the decision stays outstanding
                }
            }
            #expect(await isFreed { core == nil })
        }
    }

    @Test func droppedAfterItEnded_withEventsNeverPulled_isFreed() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            weak var core: TaskCore?
            do {
                let task = session.dataTask(with: server.url("/bytes/100"))
                core = task.core
                task.resume()
                // Ends with its response (and decision) still queued.
                for _ in 0..<500 where task.state != .completed { try await Task.sleep(for: .milliseconds(10)) }
                #expect(task.state == .completed)
            }
            #expect(await isFreed { core == nil })
        }
    }

    /// Polls (bounded): the engine lets go of a cancelled transfer on its thread.
    private func isFreed(_ freed: () -> Bool) async -> Bool {
        for _ in 0..<500 {
            if freed() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return freed()
    }
}
