import Synchronization
import Testing

@testable import CurlEngine

/// Off the engine thread nothing is held back: work runs at once.
@Suite struct EngineTurnTests {
    @Test func atEnd_offTheEngineThread_runsNow() {
        let ran = Atomic<Int>(0)
        EngineTurn.atEnd { ran.add(1, ordering: .relaxed) }
        #expect(ran.load(ordering: .relaxed) == 1)
    }

    /// Wake-ups run at once only inside an engine turn's completion phase;
    /// off the engine thread there is no turn to finish transfers in.
    @Test func isFinishingTransfers_offTheEngineThread_isFalse() {
        #expect(!EngineTurn.isFinishingTransfers)
    }
}
