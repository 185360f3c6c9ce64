import Foundation
import LoopbackServer
import Testing

@testable import AsyncURLSession

/// A task's core is freed once nobody holds the task, even when a response
/// decision (which holds the core, see `makeResponseDecision`) was left
/// unanswered or undelivered.
@Suite struct TaskReleaseTests {
    @Test func droppedAfterItsResponse_unanswered_isFreed() async throws {
        try await expectFreed(after: "/bytes/200000") { task in
            for try await event in task.events {
                if case .response = event { break }  // the decision stays outstanding
            }
        }
    }

    @Test func droppedAfterItEnded_withEventsNeverPulled_isFreed() async throws {
        try await expectFreed(after: "/bytes/100") { task in
            // Ends with its response (and decision) still queued.
            // Bounded by time, not a count of naps: on one busy CPU 500 naps
            // of 10 ms were not enough.
            let deadline = ContinuousClock.now + .seconds(scaledTimeout(30))
            while task.state != .completed, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(task.state == .completed)
        }
    }

    /// Read to its end, then dropped: the deinits see the task ended
    /// without taking its lock, cancel nothing, and the core goes.
    @Test func readToTheEnd_thenDropped_isFreedAndNotCancelled() async throws {
        try await expectFreed(after: "/bytes/100") { task in
            var bytes = 0
            for try await event in task.events {
                if case .data(let chunk) = event { bytes += chunk.count }
            }
            #expect(bytes == 100)
            #expect(task.core.hasEnded)
            #expect(task.error == nil)
        }
    }

    /// A hop's cache stage holds its task (it hands the task the hop's
    /// events) and the hop holds its stage: the task's end breaks that.
    @Test(arguments: ["cc=max-age=600", "cc=no-store"])
    func aTaskOfASessionWithACache_isFreedAfterItEnds(query: String) async throws {
        var configuration = testConfiguration()
        configuration.responseCache = ResponseCache(memoryCapacity: 1 << 20)
        try await expectFreed(after: "/cache?\(query)", configuration: configuration) { task in
            for try await _ in task.events {}
        }
    }

    /// Resumes a data task for `path` on a session of its own, runs `use`
    /// on it, drops it, and expects its core to be freed.
    private func expectFreed(
        after path: String, configuration: SessionConfiguration = testConfiguration(),
        _ use: @escaping @Sendable (SessionTask) async throws -> Void
    ) async throws {
        try await withServer { server in
            let session = Session(configuration: configuration)
            weak var core: TaskCore?
            do {
                let task = session.dataTask(with: server.url(path))
                core = task.core
                task.resume()
                try await use(task)
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
