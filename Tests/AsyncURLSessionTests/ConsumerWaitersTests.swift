import Foundation
import Testing

@testable import AsyncURLSession

/// The consumer side of a task on its own: no engine, no network.
@Suite struct ConsumerWaitersTests {
    @Test func aDownloadedFile_isLeftOpenUntilTheNextPull_once() throws {
        var waiters = ConsumerWaiters()
        #expect(!waiters.hasLeftOpen)
        let url = URL(fileURLWithPath: "/tmp/handed-out")
        waiters.delivered(.downloaded(url))
        #expect(waiters.hasLeftOpen)
        let left = waiters.takeLeftOpen()
        #expect(left.file == url)
        #expect(!waiters.hasLeftOpen)
        let leftAgain = waiters.takeLeftOpen().file
        #expect(leftAgain == nil)
    }

    @Test func anEventWithoutADecision_leavesNothingOpen() {
        var waiters = ConsumerWaiters()
        waiters.delivered(.data(Data([1, 2, 3])))
        #expect(!waiters.hasLeftOpen)
        let decision = waiters.takeOutstandingResponseDecision()
        #expect(decision == nil)
    }

    @Test func oneWakeUp_isHeldForTheTurnsEnd_andTakenOnce() {
        var waiters = ConsumerWaiters()
        let held = waiters.holdForTurnEnd(.collectCallback({}))
        #expect(held)
        // A second is refused: its maker schedules its own.
        let heldAgain = waiters.holdForTurnEnd(.collectCallback({}))
        #expect(!heldAgain)
        let taken = waiters.takeHeldWake()
        #expect(taken != nil)
        let takenAgain = waiters.takeHeldWake()
        #expect(takenAgain == nil)
        let heldAfter = waiters.holdForTurnEnd(.collectCallback({}))
        #expect(heldAfter)
    }

    @Test func theCollectCallback_isTakenOnce() {
        var waiters = ConsumerWaiters()
        let before = waiters.takeCollectCallback()
        #expect(before == nil)
        waiters.callWhenCollectionEnds {}
        let callback = waiters.takeCollectCallback()
        #expect(callback != nil)
        let callbackAgain = waiters.takeCollectCallback()
        #expect(callbackAgain == nil)
    }

    @Test func aParkedConsumer_isTakenOnce() async throws {
        let event = try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<TaskEvent?, any Error>) in
            var waiters = ConsumerWaiters()
            waiters.parkEventConsumer(continuation)
            #expect(waiters.isEventConsumerParked)
            let taken = waiters.takeEventConsumer()
            #expect(!waiters.isEventConsumerParked)
            let takenAgain = waiters.takeEventConsumer()
            #expect(takenAgain == nil)
            taken?.resume(returning: .data(Data([7])))
        }
        guard case .data(let data)? = event else {
            Issue.record("expected the data event")
            return
        }
        #expect(data == Data([7]))
    }
}

/// What a task's hops leave behind, on its own.
@Suite struct HopHistoryTests {
    @Test func failuresCount_perProtectionSpace_onlyWhenACredentialWasSent() {
        var history = HopHistory()
        // (space, credential sent) -> previousFailureCount
        let steps: [(String, Bool, Int)] = [
            ("a:80/realm", false, 0),
            ("a:80/realm", true, 1),
            ("b:80/realm", true, 1),
            ("a:80/realm", true, 2),
            ("a:80/realm", false, 2),
        ]
        for (space, sent, expected) in steps {
            let failures = history.challenged(for: space, credentialWasSent: sent)
            #expect(failures == expected, "\(space) \(sent)")
        }
    }

    @Test func redirectsAndRejectedMethods_accumulate() {
        var history = HopHistory()
        history.followedRedirect()
        history.followedRedirect()
        history.rejected(method: NSURLAuthenticationMethodHTTPDigest)
        history.rejected(method: NSURLAuthenticationMethodHTTPDigest)
        #expect(history.redirectCount == 2)
        #expect(history.rejectedMethods == [NSURLAuthenticationMethodHTTPDigest])
        #expect(history.transactions.isEmpty)
    }
}
