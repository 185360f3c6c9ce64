import Foundation
import Testing

@testable import AsyncURLSession

/// Where a download's response continues its file, on its own: no engine,
/// no network, no file.
@Suite struct DownloadStateTests {
    private func resuming(at offset: Int64) -> DownloadState {
        var state = DownloadState()
        state.requestedOffset = offset
        state.entityTag = "\"old\""
        return state
    }

    @Test func aFreshDownload_startsAtZeroWithTheResponsesLength() {
        var state = DownloadState()
        let continuation = state.responseArrived(
            statusCode: 200, contentRange: nil, expectedContentLength: 500, entityTag: "\"v1\"", lastModified: nil)
        #expect(continuation == DownloadState.Continuation(offset: 0, expectedTotal: 500, restartsFile: false, resumed: false))
        #expect(continuation.resumedEvent == nil)
        #expect(state.entityTag == "\"v1\"")
    }

    @Test func a206ForTheRangeAskedFor_continuesTheFile() {
        var state = resuming(at: 100)
        let continuation = state.responseArrived(
            statusCode: 206, contentRange: ContentRange(start: 100, end: 499, total: 500), expectedContentLength: 400,
            entityTag: nil, lastModified: nil)
        #expect(continuation.offset == 100)
        #expect(continuation.expectedTotal == 500)
        #expect(!continuation.restartsFile)
        guard case .resumed(offset: 100, expectedTotal: 500)? = continuation.resumedEvent else {
            Issue.record("expected resumed(100, 500)")
            return
        }
        // No validator in the 206: the kept one stays.
        #expect(state.entityTag == "\"old\"")
    }

    @Test func a206WithoutATotal_addsTheLengthToTheOffset() {
        var state = resuming(at: 100)
        let continuation = state.responseArrived(
            statusCode: 206, contentRange: ContentRange(start: 100, end: 499, total: nil), expectedContentLength: 400,
            entityTag: nil, lastModified: nil)
        #expect(continuation.expectedTotal == 500)
    }

    @Test(arguments: [
        (200, nil as ContentRange?),
        (206, ContentRange(start: 0, end: 499, total: 500)),
        (206, nil as ContentRange?),
    ])
    func anythingElse_restartsTheFileFromZero(status: Int, range: ContentRange?) {
        var state = resuming(at: 100)
        let continuation = state.responseArrived(
            statusCode: status, contentRange: range, expectedContentLength: 500, entityTag: "\"new\"", lastModified: nil)
        #expect(continuation.restartsFile)
        #expect(continuation.offset == 0)
        #expect(continuation.expectedTotal == 500)
        guard case .resumed(offset: 0, expectedTotal: 500)? = continuation.resumedEvent else {
            Issue.record("expected resumed(0, 500)")
            return
        }
        #expect(state.entityTag == "\"new\"")
    }
}
