import Dispatch
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// What a delegate that stops reading costs: the adapter holds at most the
/// configured stream buffer of the body, split between the core's stream and
/// chunks posted to the delegate queue (it once held both in full).
@Suite struct StreamBufferTests {
    /// Blocks the delegate queue in its first `didReceive data` until released,
    /// and measures, while blocked, how much of the body the task took.
    ///
    /// Measured here, on the blocked delegate-queue thread, not by the test's
    /// Swift task: under a loaded sanitizer run the cooperative pool was
    /// starved for more than the stall's own bound (30 s, not scaled), the
    /// stall ended by itself, the whole body came in, and the test read
    /// 16 MiB (twice, in full-suite TSan runs).
    final class StallingDelegate: NSObject, URLSessionDataDelegate, Sendable {
        let firstChunk = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = Signal()
        private let received = Mutex((bytes: 0, chunks: 0, error: (any Error)?.none, heldWhileStalled: Int64(-1)))

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let first = received.withLock { state -> Bool in
                state.bytes += data.count
                state.chunks += 1
                return state.chunks == 1
            }
            guard first else { return }
            // Wait until the transfer stops taking bytes (it pauses once both
            // shares are full), polling at most 10 s.
            var held = dataTask.countOfBytesReceived
            for _ in 0..<100 {
                Thread.sleep(forTimeInterval: 0.1)
                let now = dataTask.countOfBytesReceived
                if now == held, now > 0 { break }
                held = now
            }
            received.withLock { $0.heldWhileStalled = held }
            firstChunk.signal()
            // Bounded: a test that fails must not hold the queue forever.
            _ = release.wait(timeout: .now() + 30 * testTimeScale)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            received.withLock { $0.error = error }
            done.fire()
        }

        var bytes: Int { received.withLock { $0.bytes } }
        var heldWhileStalled: Int64 { received.withLock { $0.heldWhileStalled } }
        var error: (any Error)? { received.withLock { $0.error } }
    }

    @Test func stalledDelegate_holdsNoMoreThanTheConfiguredStreamBuffer() async throws {
        try await withServer(timeLimit: 60) { server in
            let budget = 1 << 20
            let delegate = StallingDelegate()
            let session = makeSession(delegate) { configuration in
                configuration.sessionConfiguration.streamBufferHighWatermark = budget
            }
            let size = 16 << 20
            let task = session.dataTask(with: server.url("/bytes/\(size)"))
            task.resume()
            // The delegate queue's thread blocks here. Waited for on a thread
            // of its own: a detached task would block a thread of the
            // cooperative pool (two on a 2-core machine) for the whole stall.
            let stalled = await withCheckedContinuation { continuation in
                Thread {
                    continuation.resume(returning: delegate.firstChunk.wait(timeout: .now() + 30 * testTimeScale) == .success)
                }.start()
            }
            #expect(stalled)
            let received = delegate.heldWhileStalled
            // Past the budget by at most a read in flight, the chunk the
            // delegate holds and the one the driver holds: well under 2 budgets.
            #expect(received > 0)
            #expect(received <= Int64(budget + (256 << 10)), "held \(received) bytes with a \(budget)-byte budget")

            delegate.release.signal()
            await delegate.done.wait()
            #expect(delegate.error == nil)
            #expect(delegate.bytes == size)
            session.invalidateAndCancel()
        }
    }
}
