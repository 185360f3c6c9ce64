import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

/// Code that prefers `Session.ioExecutor` runs on the session's I/O thread and
/// behaves as on any other executor.
@Suite struct IOExecutorTests {
    @Test func dataOnTheIOExecutor_resumesOnTheIOThread() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let (data, threadName) = try await withTaskExecutorPreference(Session.ioExecutor) {
                let (data, _) = try await session.data(from: server.url("/bytes/1000"))
                return (data, currentThreadName())
            }
            #expect(data == LoopbackServer.patternBody(count: 1000))
            #expect(threadName == ioThreadName, "resumed on \(threadName)")
        }
    }

    @Test func dataOnTheDefaultExecutor_doesNotResumeOnTheIOThread() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            _ = try await session.data(from: server.url("/bytes/10"))
            #expect(currentThreadName() != ioThreadName)
        }
    }

    @Test func manyConcurrentRequestsOnTheIOExecutor_allComplete() async throws {
        try await withServer(timeLimit: 60) { server in
            let session = Session(configuration: testConfiguration())
            let total = try await withTaskExecutorPreference(Session.ioExecutor) {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for worker in 0..<16 {
                        group.addTask {
                            var received = 0
                            for index in 0..<20 {
                                let size = 100 + worker * 20 + index
                                let (data, _) = try await session.data(from: server.url("/bytes/\(size)"))
                                #expect(data == LoopbackServer.patternBody(count: size))
                                received += data.count
                            }
                            return received
                        }
                    }
                    return try await group.reduce(0, +)
                }
            }
            let expected = (0..<16).reduce(0) { sum, worker in
                sum + (0..<20).reduce(0) { $0 + 100 + worker * 20 + $1 }
            }
            #expect(total == expected)
        }
    }

    /// A large body through `events` on the I/O thread: the consumer's
    /// back-pressure (pause and resume of receiving) still works when the
    /// consumer and the engine share one thread.
    @Test func largeBodyThroughEventsOnTheIOExecutor_arrivesWhole() async throws {
        try await withServer(timeLimit: 60) { server in
            let session = Session(configuration: testConfiguration())
            let count = 8 * 1024 * 1024
            let recorded = await withTaskExecutorPreference(Session.ioExecutor) {
                let task = session.dataTask(with: server.url("/bytes/\(count)"))
                task.resume()
                return await record(task)
            }
            #expect(recorded.error == nil)
            #expect(recorded.body.count == count)
            #expect(recorded.body == LoopbackServer.patternBody(count: count))
        }
    }

    /// Concurrent transfers are spread over the I/O threads, and code on the
    /// I/O executor follows them: with more than one thread, 16 workers'
    /// requests resume on more than one.
    @Test(.enabled(if: Session.ioThreadCount > 1, "one I/O thread on this machine"))
    func concurrentRequestsOnTheIOExecutor_useSeveralIOThreads() async throws {
        try await withServer(timeLimit: 60) { server in
            let session = Session(configuration: testConfiguration())
            let threads = try await withTaskExecutorPreference(Session.ioExecutor) {
                try await withThrowingTaskGroup(of: Set<UInt>.self) { group in
                    for _ in 0..<16 {
                        group.addTask {
                            var seen: Set<UInt> = []
                            for _ in 0..<10 {
                                _ = try await session.data(from: server.url("/delay/20"))
                                seen.insert(UInt(pthread_self()))
                            }
                            return seen
                        }
                    }
                    return try await group.reduce(into: Set<UInt>()) { $0.formUnion($1) }
                }
            }
            #expect(threads.count > 1, "all 160 requests resumed on one I/O thread")
            #expect(threads.count <= Session.ioThreadCount)
        }
    }

    @Test func cancellingASwiftTaskOnTheIOExecutor_cancelsItsTransfer() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let waiter = Task(executorPreference: Session.ioExecutor) {
                try await session.data(from: server.url("/stall-headers"))
            }
            try await Task.sleep(for: .milliseconds(200))
            waiter.cancel()
            let result = await waiter.result
            if case .failure(let error) = result {
                #expect(error.urlErrorCode == .cancelled)
            } else {
                Issue.record("a stalled request succeeded")
            }
        }
    }
}

/// What the I/O threads call themselves (Linux keeps 15 bytes of a thread's name).
private let ioThreadName = String("AsyncURLSession.CurlEngine".prefix(15))

private func currentThreadName() -> String {
    let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
    return name.trimmingCharacters(in: .newlines)
}
