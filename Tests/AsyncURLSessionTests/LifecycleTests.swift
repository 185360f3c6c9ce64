import AsyncURLSession
import Foundation
import LoopbackServer
import Synchronization
import Testing

@Suite struct LifecycleTests {
    @Test func newTask_isSuspendedWithUniqueIdentifier() async throws {
        let session = Session(configuration: testConfiguration())
        let first = session.dataTask(with: URL(string: "http://127.0.0.1:1/")!)
        let second = session.dataTask(with: URL(string: "http://127.0.0.1:1/")!)
        #expect(first.state == .suspended)
        #expect(first.taskIdentifier != second.taskIdentifier)
        #expect(first.originalRequest?.url == URL(string: "http://127.0.0.1:1/"))
        first.taskDescription = "first"
        #expect(first.taskDescription == "first")
    }

    @Test func suspend_stopsTheTransfer_andResumeFinishesIt() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let size = 8 * 1024 * 1024
            let task = session.dataTask(with: server.url("/bytes/\(size)"))
            task.resume()
            var iterator = task.events.makeAsyncIterator()
            var body = Data()
            // Take the response and the first chunk, then suspend.
            while body.isEmpty, let event = try await iterator.next() {
                if case .data(let chunk) = event { body.append(chunk) }
            }
            task.suspend()
            #expect(task.state == .suspended)
            // Let what was already on its way land (a loaded machine may take
            // longer than one nap: wait until a 200 ms window sees nothing
            // new), then check nothing more moves.
            var before = task.countOfBytesReceived
            let settleBy = ContinuousClock.now + .seconds(scaledTimeout(10))
            repeat {
                before = task.countOfBytesReceived
                try await Task.sleep(for: .milliseconds(200))
            } while task.countOfBytesReceived != before && ContinuousClock.now < settleBy
            try await Task.sleep(for: .milliseconds(400))
            #expect(task.countOfBytesReceived == before, "a suspended task must not receive")
            #expect(before < Int64(size))
            task.resume()
            while let event = try await iterator.next() {
                if case .data(let chunk) = event { body.append(chunk) }
            }
            #expect(body == LoopbackServer.patternBody(count: size))
        }
    }

    @Test func cancel_midBody_endsWithCancelled() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/bytes/\(512 * 1024 * 1024)"))
            task.resume()
            var received = 0
            do {
                for try await event in task.events {
                    if case .data(let chunk) = event {
                        received += chunk.count
                        if received > 1_000_000 { task.cancel() }
                    }
                }
                Issue.record("the stream should throw")
            } catch {
                #expect(error.urlErrorCode == .cancelled)
            }
            #expect(task.state == .completed)
            #expect(task.error.flatMap { $0.urlErrorCode } == .cancelled)
            #expect(received < 512 * 1024 * 1024)
        }
    }

    @Test func cancel_beforeResume_completesWithCancelled() async throws {
        let session = Session(configuration: testConfiguration())
        let task = session.dataTask(with: URL(string: "http://127.0.0.1:1/")!)
        task.cancel()
        #expect(task.state == .completed)
        let recorded = await record(task)
        #expect(recorded.error?.urlErrorCode == .cancelled)
    }

    @Test func cancellingTheIteratingSwiftTask_cancelsTheTransfer() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/drip/100000?chunk=10&interval=20"))
            task.resume()
            let events = Mutex(0)
            let consumer = Task {
                for try await _ in task.events { events.withLock { $0 += 1 } }
            }
            // Cancelled once it is iterating (the response and a first piece
            // seen), however late a loaded machine started it: a consumer
            // cancelled before its first pull never iterates at all.
            try #require(try await eventually { events.withLock { $0 } >= 2 })
            consumer.cancel()
            let result = await consumer.result
            #expect(throws: URLError.self) { try result.get() }
            try await eventually { task.state == .completed }
            #expect(task.state == .completed)
            #expect(task.error.flatMap { $0.urlErrorCode } == .cancelled)
        }
    }

    /// Cancelled while busy between two pulls: AsyncThrowingStream ends the
    /// stream at the next pull without asking for an event, and the
    /// transfer must still be cancelled, not run on unnoticed.
    @Test func cancellingTheIteratingSwiftTaskBetweenPulls_cancelsTheTransfer() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/drip/100000?chunk=10&interval=20"))
            task.resume()
            let consumer = Task {
                var pulled = 0
                for try await _ in task.events {
                    pulled += 1
                    // Busy between pulls, not waiting on one.
                    if pulled == 1 { try? await Task.sleep(for: .seconds(10)) }
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            consumer.cancel()
            _ = await consumer.result
            try await eventually { task.state == .completed }
            #expect(task.state == .completed)
            #expect(task.error.flatMap { $0.urlErrorCode } == .cancelled)
        }
    }

    /// Events already queued are taken at once (no suspension): a consumer
    /// behind the network must still see a cancel at its next pull, not the
    /// rest of the queue.
    @Test func cancel_whileTheConsumerIsBehind_endsAtItsNextPull() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/bytes/16777216"))
            task.resume()
            var pulled = 0
            var body = 0
            do {
                for try await event in task.events {
                    pulled += 1
                    if case .data(let chunk) = event { body += chunk.count }
                    if pulled == 2 {
                        // Behind: the body queues up to the high watermark meanwhile.
                        try await Task.sleep(for: .milliseconds(300))
                        task.cancel()
                    }
                }
                Issue.record("the stream ended normally after a cancel")
            } catch {
                #expect((error as? URLError)?.code == .cancelled)
            }
            #expect(body < 16_777_216)
            #expect(task.error.flatMap { $0.urlErrorCode } == .cancelled)
        }
    }

    @Test func cancellingTheSwiftTaskAwaitingData_cancelsTheTransfer() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let waiter = Task {
                try await session.data(from: server.url("/stall-headers"))
            }
            try await Task.sleep(for: .milliseconds(200))
            waiter.cancel()
            let result = await waiter.result
            #expect(throws: URLError.self) { try result.get() }
            if case .failure(let error) = result { #expect(error.urlErrorCode == .cancelled) }
            #expect(session.tasksInProgress == 0)
        }
    }

    /// `events` has one consumer. A second one arriving while the first waits
    /// is refused with an error that says so, instead of stealing its events.
    @Test func secondConsumerOfEvents_whileTheFirstWaits_getsAClearError() async throws {
        try await withServer { server in
            // The head, then a body that never comes: the first consumer
            // parks after taking the response, which the test waits to see
            // (a fixed nap was outrun when a loaded machine started it late).
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/stall/100?after=0"))
            task.resume()
            let tookResponse = Mutex(false)
            let first = Task { () -> (any Error)? in
                do {
                    for try await event in task.events {
                        if case .response = event { tookResponse.withLock { $0 = true } }
                    }
                    return nil
                } catch {
                    return error
                }
            }
            try #require(try await eventually { tookResponse.withLock { $0 } })
            try await Task.sleep(for: .milliseconds(100))
            await #expect(throws: URLError.self) {
                for try await _ in task.events {}
            }
            task.cancel()
            let firstError = await first.value
            #expect(firstError?.urlErrorCode == .cancelled, "the first consumer keeps the stream")
        }
    }

    @Test func finishTasksAndInvalidate_refusesNewTasks() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let running = session.dataTask(with: server.url("/delay/200"))
            running.resume()
            session.finishTasksAndInvalidate()
            let recorded = await record(running)
            #expect(recorded.error == nil, "running tasks finish")
            #expect(recorded.response?.statusCode == 200)
            await #expect(throws: URLError.self) { _ = try await session.data(from: server.url("/bytes/1")) }
        }
    }

    @Test func invalidateAndCancel_cancelsRunningTasks() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let running = session.dataTask(with: server.url("/stall-headers"))
            running.resume()
            try await Task.sleep(for: .milliseconds(100))
            session.invalidateAndCancel()
            let recorded = await record(running)
            #expect(recorded.error?.urlErrorCode == .cancelled)
        }
    }

    @Test func sharedSession_ignoresInvalidation() async throws {
        try await withServer { server in
            Session.shared.invalidateAndCancel()
            let (data, _) = try await Session.shared.data(from: server.url("/bytes/10"))
            #expect(data.count == 10)
        }
    }
}
