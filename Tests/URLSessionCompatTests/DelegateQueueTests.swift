import Foundation
import Synchronization
import Testing
import TestSupport

@testable import URLSessionCompat

/// One task's lane on the delegate queue: calls run in order, on the queue,
/// never two at once, however fast they are posted.
@Suite struct DelegateQueueTests {
    /// What the calls saw, appended in the order they ran.
    private final class Record: Sendable {
        private let state = Mutex<(order: [Int], offQueue: Int, overlaps: Int, running: Bool)>(([], 0, 0, false))

        func run(_ index: Int, expecting queue: OperationQueue) {
            state.withLock { state in
                if state.running { state.overlaps += 1 }
                state.running = true
                if OperationQueue.current !== queue { state.offQueue += 1 }
                state.order.append(index)
            }
            state.withLock { $0.running = false }
        }

        var snapshot: (order: [Int], offQueue: Int, overlaps: Int) {
            state.withLock { ($0.order, $0.offQueue, $0.overlaps) }
        }
    }

    /// Regression: with one operation per call chained by `addDependency`, a
    /// call posted while the previous one was finishing sometimes never ran
    /// (corelibs' OperationQueue lost the dependency) and the transfer hung.
    @Test func manyPostedCalls_allRunInOrder_onAConcurrentQueue() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4
        let lane = DelegateQueue(queue: queue, postedByteLimit: 512 << 10)
        let record = Record()
        let count = 20_000
        try await withTimeLimit(60) {
            for index in 0..<count {
                if index % 97 == 0 {
                    await lane.run { record.run(index, expecting: queue) }
                } else {
                    await lane.post(bytes: 16 << 10) { record.run(index, expecting: queue) }
                }
            }
            await lane.run {}
        }
        let (order, offQueue, overlaps) = record.snapshot
        #expect(order == Array(0..<count))
        #expect(offQueue == 0, "calls ran outside the delegate queue")
        #expect(overlaps == 0, "two calls of one lane ran at once")
    }

    /// A wait left by a call of the lane runs once the lane has no calls
    /// left, in the same operation: what it posts runs before work that was
    /// queued behind that operation meanwhile (a completion handler then
    /// needs no new operation of its own).
    @Test func waitBeforeIdling_runsInTheSameOperation_beforeWorkQueuedBehindIt() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let lane = DelegateQueue(queue: queue, postedByteLimit: 512 << 10)
        let other = DelegateQueue(queue: queue, postedByteLimit: 512 << 10)
        let order = Mutex<[String]>([])
        try await withTimeLimit(60) {
            await lane.run {
                order.withLock { $0.append("call") }
                other.post { order.withLock { $0.append("queued behind") } }
                lane.waitBeforeIdling {
                    lane.post { order.withLock { $0.append("posted by the wait") } }
                }
            }
            await other.run {}
            await lane.run {}
        }
        #expect(order.withLock { $0 } == ["call", "posted by the wait", "queued behind"])
    }

    @Test func waitBeforeIdling_fromOutsideTheLane_isIgnored() async throws {
        let queue = OperationQueue()
        let lane = DelegateQueue(queue: queue, postedByteLimit: 512 << 10)
        let ran = Mutex(false)
        lane.waitBeforeIdling { ran.withLock { $0 = true } }
        try await withTimeLimit(60) { await lane.run {} }
        #expect(!ran.withLock { $0 })
    }

    /// Two lanes on one serial queue both make progress: a busy lane hands
    /// the queue over after a batch instead of holding it.
    @Test func busyLane_letsAnotherLaneRun() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let busy = DelegateQueue(queue: queue, postedByteLimit: 512 << 10)
        let other = DelegateQueue(queue: queue, postedByteLimit: 512 << 10)
        let otherRanAfter = Mutex<Int?>(nil)
        let busyCalls = Mutex(0)
        try await withTimeLimit(60) {
            queue.isSuspended = true
            for _ in 0..<(DelegateQueue.callsPerOperation * 4) {
                busy.post { busyCalls.withLock { $0 += 1 } }
            }
            other.post { otherRanAfter.withLock { $0 = busyCalls.withLock { $0 } } }
            queue.isSuspended = false
            await busy.run {}
            await other.run {}
        }
        let ranAfter = try #require(otherRanAfter.withLock { $0 })
        #expect(ranAfter < DelegateQueue.callsPerOperation * 4, "the other lane waited for every call of the busy one")
    }

    /// A task that prefers a lane runs on the delegate queue, and what it
    /// posts to its own lane runs at once, in its place: nothing is queued
    /// behind it for another operation.
    @Test func codeRunningOnItsLane_runsItsCallsInPlace() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let lane = DelegateQueue(queue: queue, postedByteLimit: 512 << 10)
        let steps = Steps()
        let onQueue = try await withTimeLimit(30) {
            await Task(executorPreference: lane) {
                let onQueue = OperationQueue.current === queue
                await lane.post(bytes: 1) { steps.add("posted") }
                steps.add("after post")
                await lane.run { steps.add("run") }
                let answer = await lane.ask(registeringWith: { _ in }) { (answer: @escaping @Sendable (Int) -> Void) in
                    steps.add("asked")
                    answer(7)
                }
                steps.add("answer \(answer ?? 0)")
                return onQueue
            }.value
        }
        #expect(onQueue, "the task ran on the delegate queue")
        #expect(steps.all == ["posted", "after post", "run", "asked", "answer 7"])
    }

    /// Calls from elsewhere still wait for their turn on the queue.
    @Test func callsFromElsewhere_areQueued() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let lane = DelegateQueue(queue: queue, postedByteLimit: 512 << 10)
        let steps = Steps()
        try await withTimeLimit(30) {
            queue.isSuspended = true
            lane.post { steps.add("ran") }
            #expect(steps.all.isEmpty, "a call from outside the lane ran before the queue did")
            queue.isSuspended = false
            await lane.run {}
        }
        #expect(steps.all == ["ran"])
    }

    private final class Steps: Sendable {
        private let steps = Mutex<[String]>([])
        func add(_ step: String) { steps.withLock { $0.append(step) } }
        var all: [String] { steps.withLock { $0 } }
    }
}
