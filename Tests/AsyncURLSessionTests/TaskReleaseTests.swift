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

    /// Read to its end, then dropped: the deinits see the task ended
    /// without taking its lock, cancel nothing, and the core goes.
    @Test func readToTheEnd_thenDropped_isFreedAndNotCancelled() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            weak var core: TaskCore?
            do {
                let task = session.dataTask(with: server.url("/bytes/100"))
                core = task.core
                task.resume()
                var bytes = 0
                for try await event in task.events {
                    if case .data(let chunk) = event { bytes += chunk.count }
                }
                #expect(bytes == 100)
                #expect(task.core.hasEnded)
                #expect(task.error == nil)
            }
            #expect(await isFreed { core == nil })
        }
    }

    /// A hop's cache stage holds its task (it hands the task the hop's
    /// events) and the hop holds its stage: the task's end breaks that.
    @Test(arguments: ["cc=max-age=600", "cc=no-store"])
    func aTaskOfASessionWithACache_isFreedAfterItEnds(query: String) async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.responseCache = ResponseCache(memoryCapacity: 1 << 20)
            let session = Session(configuration: configuration)
            weak var core: TaskCore?
            do {
                let task = session.dataTask(with: server.url("/cache?\(query)"))
                core = task.core
                task.resume()
                for try await _ in task.events {}
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
