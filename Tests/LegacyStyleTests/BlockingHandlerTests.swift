import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// Completion handlers that block, as legacy code's do. Sessions made
/// without a delegate queue run their handlers on a serial queue of their
/// own, so a handler that blocks holds one thread and the next handler, of
/// another session, gets another thread at once.
///
/// Before, those handlers ran on libdispatch's pool of as many threads as
/// CPUs, which on Linux grows by about a thread a second once its threads
/// block: 8 handlers that each waited for a request made inside them took 5
/// to 6 s in a fresh process, in FoundationNetworking as here. In the full
/// suite the pool may already have grown, so the first test below fails
/// without the serial queues reliably only when run on its own.
@Suite struct BlockingHandlerTests {
    /// 32 handlers that each wait until all 32 are running: they can only
    /// finish if each got a thread of its own without waiting for the pool.
    @Test func handlersThatBlock_ofSessionsMadeInline_eachGetAThread() async throws {
        try await withServer(timeLimit: 90) { server in
            let count = 32
            let running = Mutex(0)
            let gate = DispatchSemaphore(value: 0)
            let metTheOthers = Mutex(0)
            let returned = Signal()
            for _ in 0..<count {
                URLSession(configuration: legacyConfiguration()).dataTask(with: server.url("/bytes/10")) { _, _, _ in
                    let last = running.withLock { running in
                        running += 1
                        return running == count
                    }
                    if last { for _ in 0..<count { gate.signal() } }
                    if gate.wait(timeout: .now() + 20 * testTimeScale) == .success {
                        metTheOthers.withLock { $0 += 1 }
                    }
                    returned.fire()
                }.resume()
            }
            await returned.wait(for: count)
            #expect(metTheOthers.withLock { $0 } == count, "\(running.withLock { $0 }) handlers were running at once")
        }
    }

    /// The legacy pattern itself: a handler that waits, with a semaphore,
    /// for a request it made on another session.
    @Test func handlersThatWaitForAnotherRequest_allGetTheirAnswer() async throws {
        try await withServer(timeLimit: 90) { server in
            let count = 16
            let answered = Mutex(0)
            let returned = Signal()
            for _ in 0..<count {
                URLSession(configuration: legacyConfiguration()).dataTask(with: server.url("/bytes/10")) { _, _, _ in
                    let inner = DispatchSemaphore(value: 0)
                    URLSession(configuration: legacyConfiguration()).dataTask(with: server.url("/bytes/20")) { data, _, _ in
                        if data?.count == 20 { answered.withLock { $0 += 1 } }
                        inner.signal()
                    }.resume()
                    _ = inner.wait(timeout: .now() + 20 * testTimeScale)
                    returned.fire()
                }.resume()
            }
            await returned.wait(for: count)
            #expect(answered.withLock { $0 } == count)
        }
    }
}
