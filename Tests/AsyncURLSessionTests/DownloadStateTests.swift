import Foundation
import Testing

@testable import AsyncURLSession

/// Where a download's response continues its file, on its own: no engine,
/// no network, no file.
@Suite struct DownloadStateTests {
    private func resuming(at offset: Int64) -> DownloadState {
        DownloadState(file: nil, requestedOffset: offset, entityTag: "\"old\"")
    }

    @Test func aFreshDownload_startsAtZeroWithTheResponsesLength() {
        var state = DownloadState(file: nil)
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

    // MARK: - Progress, as a table: each step's input and what is reported

    @Test func progress_isReportedPerStepOfBytesAndCountsFromTheLastReport() {
        var state = DownloadState(file: nil)
        let second: UInt64 = 1_000_000_000
        // (total, now) -> the bytes of the report, nil for none.
        let steps: [(total: Int64, now: UInt64, reported: Int64?)] = [
            (1_000, second, 1_000),  // the first one: the interval since 0 has passed
            (2_000, second + 1, nil),  // too soon, too few bytes
            (70_000, second + 2, 69_000),  // a byte step since the last report
            (70_000, 2 * second, nil),  // nothing new
            (71_000, 2 * second, 1_000),  // the interval passed
        ]
        for step in steps {
            let progress = state.progress(at: step.total, of: 100_000, now: step.now)
            #expect(progress?.bytes == step.reported, "at \(step.total)")
            if let progress {
                #expect(progress.totalBytes == step.total)
                #expect(progress.totalBytesExpected == 100_000)
            }
        }
        // The end reports what the last report left, once.
        #expect(state.finalProgress(at: 75_000, of: 100_000)?.bytes == 4_000)
        #expect(state.finalProgress(at: 75_000, of: 100_000) == nil)
    }

    @Test func aResumedDownloadsProgress_countsFromWhereTheFileContinues() {
        var state = resuming(at: 100)
        _ = state.responseArrived(
            statusCode: 206, contentRange: ContentRange(start: 100, end: 499, total: 500), expectedContentLength: 400,
            entityTag: nil, lastModified: nil)
        #expect(state.finalProgress(at: 500, of: 500)?.bytes == 400)
    }
}
