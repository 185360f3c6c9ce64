import Foundation
import Testing

@testable import AsyncURLSession

/// The retry budget's ledger: the minimum per window, the share of recent
/// requests, origins apart, and the window sliding on.
@Suite struct RetryLedgerTests {
    @Test func minimum_isAllowedWithoutRequests() {
        let ledger = RetryLedger()
        let budget = RetryBudget(ratio: 0.2, minimumRetries: 3, window: 10)
        let taken = (0..<10).filter { _ in ledger.takeRetry(to: "a", budget: budget, now: 100) }.count
        #expect(taken == 3)
    }

    @Test func share_ofRecentRequests_isAllowedAboveTheMinimum() {
        let ledger = RetryLedger()
        let budget = RetryBudget(ratio: 0.2, minimumRetries: 2, window: 10)
        for _ in 0..<50 { ledger.noteRequest(to: "a", budget: budget, now: 100) }
        let taken = (0..<100).filter { _ in ledger.takeRetry(to: "a", budget: budget, now: 100) }.count
        #expect(taken == 10)
    }

    @Test func origins_haveBudgetsOfTheirOwn() {
        let ledger = RetryLedger()
        let budget = RetryBudget(ratio: 0, minimumRetries: 1, window: 10)
        #expect(ledger.takeRetry(to: "a", budget: budget, now: 100))
        #expect(!ledger.takeRetry(to: "a", budget: budget, now: 100))
        #expect(ledger.takeRetry(to: "b", budget: budget, now: 100))
    }

    @Test func retries_outsideTheWindow_areForgotten() {
        let ledger = RetryLedger()
        let budget = RetryBudget(ratio: 0, minimumRetries: 2, window: 10)
        #expect(ledger.takeRetry(to: "a", budget: budget, now: 100))
        #expect(ledger.takeRetry(to: "a", budget: budget, now: 100))
        #expect(!ledger.takeRetry(to: "a", budget: budget, now: 105))
        // Half the window later, the old window weighs half: one retry fits.
        #expect(ledger.takeRetry(to: "a", budget: budget, now: 115))
        #expect(ledger.takeRetry(to: "a", budget: budget, now: 140))
    }

    @Test func origin_namesSchemeHostAndPort() {
        #expect(RetryLedger.origin(of: URL(string: "https://Example.test/a")) == "https://example.test:443")
        #expect(RetryLedger.origin(of: URL(string: "http://example.test:8080/a")) == "http://example.test:8080")
    }
}
