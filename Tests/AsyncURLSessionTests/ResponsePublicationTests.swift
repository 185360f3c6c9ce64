import Foundation
import Testing

@testable import AsyncURLSession

/// The response-publication state on its own: no engine, no network.
@Suite struct ResponsePublicationTests {
    private func isSuccess(_ end: HopEnd?) -> Bool {
        if case .success? = end { return true }
        return false
    }

    @Test func withoutHandlers_aHopEndIsFinishedAtOnce() {
        var publication = ResponsePublication()
        #expect(publication.hopEnded(.success) == .finishNow)
        #expect(publication.published() == nil)
    }

    @Test func whileHandlersDecide_theHopEndWaitsForThePublication() {
        var publication = ResponsePublication()
        publication.handlersStarted()
        #expect(publication.handlersDeciding)
        #expect(publication.hopEnded(.failure(URLError(.networkConnectionLost))) == .heldUntilPublished)
        guard case .failure(let error)? = publication.published() else {
            Issue.record("the waiting end was not returned")
            return
        }
        #expect(error.code == .networkConnectionLost)
        #expect(!publication.handlersDeciding)
        // Returned once.
        #expect(publication.published() == nil)
    }

    @Test func handlersThatDecideBeforeTheEnd_leaveNothingWaiting() {
        var publication = ResponsePublication()
        publication.handlersStarted()
        #expect(publication.published() == nil)
        #expect(publication.hopEnded(.success) == .finishNow)
    }

    @Test func aHeldResponseThatBecomesTheResult_endsRightAfterPublishing() {
        var publication = ResponsePublication()
        publication.endAfterPublishing()
        #expect(!publication.handlersDeciding)
        #expect(isSuccess(publication.published()))
    }

    @Test func aHeldResponseThatBecomesTheResult_waitsForItsHandlersToo() {
        var publication = ResponsePublication()
        publication.endAfterPublishing()
        publication.handlersStarted()
        #expect(publication.handlersDeciding)
        #expect(isSuccess(publication.published()))
        #expect(publication.published() == nil)
    }
}
