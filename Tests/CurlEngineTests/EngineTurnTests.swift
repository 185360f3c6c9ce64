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
}
