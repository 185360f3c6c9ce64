import Glibc
import Testing

@testable import CurlEngine

/// The eventfd is written only when the engine said it is about to block.
@Suite struct CommandQueueTests {
    private let command = EngineCommand.closeSession(EngineSessionID(serial: 1, shardCount: 1))

    /// Reads the eventfd's counter without blocking: nil when nothing was written.
    private func takeSignal(_ queue: CommandQueue) -> UInt64? {
        var counter: UInt64 = 0
        let count = withUnsafeMutableBytes(of: &counter) { read(queue.eventFD, $0.baseAddress, 8) }
        return count == 8 ? counter : nil
    }

    @Test func enqueue_whileEngineAwake_writesNothing() {
        let queue = CommandQueue()
        queue.enqueue(command)
        #expect(takeSignal(queue) == nil)
        #expect(!queue.prepareToSleep(), "a command waits")
        var batch: [EngineCommand?] = []
        queue.drain(into: &batch)
        #expect(batch.count == 1)
        #expect(queue.prepareToSleep(), "drained")
    }

    @Test func enqueue_afterPrepareToSleep_writesOnceForABurst() {
        let queue = CommandQueue()
        #expect(queue.prepareToSleep())
        queue.enqueue(command)
        queue.enqueue(command)
        #expect(takeSignal(queue) == 1)
        var batch: [EngineCommand?] = []
        queue.drain(into: &batch)
        #expect(batch.count == 2)
    }

    @Test func prepareToSleep_withCommandsWaiting_refuses() {
        let queue = CommandQueue()
        queue.enqueue(command)
        #expect(!queue.prepareToSleep())
        queue.enqueue(command)
        #expect(takeSignal(queue) == nil)
    }

    @Test func drain_afterAWrite_resetsTheCounter() {
        let queue = CommandQueue()
        #expect(queue.prepareToSleep())
        queue.enqueue(command)
        queue.awoke()
        var batch: [EngineCommand?] = []
        queue.drain(into: &batch)
        #expect(batch.count == 1)
        #expect(takeSignal(queue) == nil)
    }

    @Test func awoke_thenEnqueue_writesNothing() {
        let queue = CommandQueue()
        #expect(queue.prepareToSleep())
        queue.awoke()
        queue.enqueue(command)
        #expect(takeSignal(queue) == nil)
    }
}
