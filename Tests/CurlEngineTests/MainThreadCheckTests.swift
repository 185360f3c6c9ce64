import TestSupport
import Foundation
import Testing

@testable import CurlEngine

/// Each thread's first answer is Foundation's (here a stand-in's), and is
/// remembered for that thread only.
@Suite struct MainThreadCheckTests {
    /// Runs `body` on a new thread and hands back what it returned.
    private func onNewThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test(.timeLimit(.scaledMinutes(1)))
    func isMainThread_onANewThread_isFoundationsAnswer() async {
        let answers = await onNewThread {
            [MainThreadCheck.isMainThread, Thread.isMainThread]
        }
        #expect(answers == [false, false])
    }

    @Test(.timeLimit(.scaledMinutes(1)))
    func isMainThread_askedAgain_keepsTheThreadsFirstAnswer() async {
        let answers = await onNewThread {
            [
                MainThreadCheck.isMainThread(asking: { true }),
                MainThreadCheck.isMainThread(asking: { false }),
                MainThreadCheck.isMainThread,
            ]
        }
        #expect(answers == [true, true, true])
    }

    @Test(.timeLimit(.scaledMinutes(1)))
    func isMainThread_onAnotherThread_asksAgain() async {
        let first = await onNewThread { MainThreadCheck.isMainThread(asking: { true }) }
        let second = await onNewThread { MainThreadCheck.isMainThread(asking: { false }) }
        #expect(first)
        #expect(!second)
    }
}
