import Foundation
import Testing

@testable import AsyncURLSession

/// A task's `Progress` is brought up to its counters after the task's lock
/// (`ProgressUpdate`): it still ends at the totals, and a parent it was
/// added to follows it.
@Suite(.timeLimit(.minutes(1)))
struct TaskProgressTests {
    @Test func aDataTasksProgress_endsAtTheBodysLength() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/200000"))
            let progress = task.progress
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.body.count == 200_000)
            #expect(progress.completedUnitCount == 200_000)
            #expect(progress.totalUnitCount == 200_000)
        }
    }

    @Test func aParentProgress_followsADownloadAddedToIt() async throws {
        try await withServer { server in
            let parent = Progress(totalUnitCount: 1)
            let task = Session(configuration: testConfiguration()).downloadTask(with: server.url("/bytes/300000"))
            parent.addChild(task.progress, withPendingUnitCount: 1)
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(parent.fractionCompleted == 1)
            #expect(parent.completedUnitCount == 1)
        }
    }
}
