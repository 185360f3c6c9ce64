import AgentWire
import Testing
@testable import BackgroundAgent

/// The moves of a background transfer's life, as a table.
@Suite struct TransferPhaseTests {
    @Test func everyMove_isAllowedOrRefused_asTheDiagramSays() {
        let allowed: Set<String> = [
            "queued>running", "queued>cancelled",
            "running>running", "running>waitingToRetry", "running>finished", "running>failed", "running>cancelled",
            "waitingToRetry>running", "waitingToRetry>failed", "waitingToRetry>cancelled",
            "finished>delivered", "failed>delivered", "cancelled>delivered",
        ]
        for from in TransferPhase.allCases {
            for to in TransferPhase.allCases {
                let move = "\(from.rawValue)>\(to.rawValue)"
                #expect(from.allows(to) == allowed.contains(move), "\(move)")
            }
        }
    }

    @Test func onlyQueuedRunningAndWaiting_areLive() {
        #expect(TransferPhase.allCases.filter(\.isLive) == [.queued, .running, .waitingToRetry])
    }
}
