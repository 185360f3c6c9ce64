import Foundation
import Testing

@testable import AsyncURLSession

/// When upload progress wakes a parked events consumer (`TaskPipeline.sentBody`):
/// at most once per interval, counted from the hop's first report, and the last.
@Suite struct UploadProgressWakeTests {
    private let start: UInt64 = 1_000_000_000
    private let interval = TaskPipeline.progressWakeInterval

    /// A running pipeline whose consumer is parked.
    private func parkedPipeline() -> TaskPipeline {
        var pipeline = TaskPipeline(highWatermark: 100, lowWatermark: 10)
        _ = pipeline.resume()
        pipeline.startedSending(expected: 1000)
        park(&pipeline)
        return pipeline
    }

    private func park(_ pipeline: inout TaskPipeline) {
        guard case .wait = pipeline.next() else {
            Issue.record("the consumer did not park")
            return
        }
    }

    /// The progress a wake hands over, or nil when the consumer stays parked.
    private func wokenWith(_ action: TaskPipeline.DeliveryAction) -> TransferProgress? {
        guard case .wakeConsumer(.uploadProgress(let progress)) = action else { return nil }
        return progress
    }

    @Test func firstReport_leavesTheConsumerParked_andStartsTheInterval() {
        var pipeline = parkedPipeline()
        #expect(wokenWith(pipeline.sentBody(totalBytesSent: 100, totalBytesExpected: 1000, now: start)) == nil)
        #expect(wokenWith(pipeline.sentBody(totalBytesSent: 200, totalBytesExpected: 1000, now: start + interval - 1)) == nil)
        // One interval after the first report: woken with every byte so far.
        let later = wokenWith(pipeline.sentBody(totalBytesSent: 300, totalBytesExpected: 1000, now: start + interval))
        #expect(later == TransferProgress(bytes: 300, totalBytes: 300, totalBytesExpected: 1000))
    }

    /// A body sent within the interval reports once, at its end.
    @Test func reportsWithinTheInterval_leaveTheConsumerParked_andTheLastCatchesUp() {
        var pipeline = parkedPipeline()
        #expect(wokenWith(pipeline.sentBody(totalBytesSent: 100, totalBytesExpected: 1000, now: start)) == nil)
        #expect(wokenWith(pipeline.sentBody(totalBytesSent: 300, totalBytesExpected: 1000, now: start + 1_000_000)) == nil)
        #expect(wokenWith(pipeline.sentBody(totalBytesSent: 600, totalBytesExpected: 1000, now: start + 2_000_000)) == nil)
        let last = wokenWith(pipeline.sentBody(totalBytesSent: 1000, totalBytesExpected: 1000, now: start + 3_000_000))
        #expect(last == TransferProgress(bytes: 1000, totalBytes: 1000, totalBytesExpected: 1000))
    }

    @Test func reportAfterTheInterval_wakesTheConsumerAgain() {
        var pipeline = parkedPipeline()
        _ = pipeline.sentBody(totalBytesSent: 100, totalBytesExpected: 1000, now: start)
        let first = wokenWith(pipeline.sentBody(totalBytesSent: 400, totalBytesExpected: 1000, now: start + interval))
        #expect(first == TransferProgress(bytes: 400, totalBytes: 400, totalBytesExpected: 1000))
        park(&pipeline)
        #expect(wokenWith(pipeline.sentBody(totalBytesSent: 500, totalBytesExpected: 1000, now: start + interval + 1_000_000)) == nil)
        let second = wokenWith(pipeline.sentBody(totalBytesSent: 700, totalBytesExpected: 1000, now: start + 2 * interval))
        #expect(second == TransferProgress(bytes: 300, totalBytes: 700, totalBytesExpected: 1000))
    }

    /// Each hop (a redirect or challenge re-sends the body) counts its
    /// interval from its own first report.
    @Test func nextHop_countsItsIntervalAnew() {
        var pipeline = parkedPipeline()
        _ = pipeline.sentBody(totalBytesSent: 100, totalBytesExpected: 1000, now: start)
        pipeline.startedSending(expected: 1000)
        let late = start + 10 * interval
        #expect(wokenWith(pipeline.sentBody(totalBytesSent: 100, totalBytesExpected: 1000, now: late)) == nil)
        let next = wokenWith(pipeline.sentBody(totalBytesSent: 200, totalBytesExpected: 1000, now: late + interval))
        #expect(next == TransferProgress(bytes: 200, totalBytes: 200, totalBytesExpected: 1000))
    }

    @Test func bodyOfUnknownLength_wakesTheConsumerForEveryReport() {
        var pipeline = TaskPipeline(highWatermark: 100, lowWatermark: 10)
        _ = pipeline.resume()
        pipeline.startedSending(expected: -1)
        park(&pipeline)
        #expect(wokenWith(pipeline.sentBody(totalBytesSent: 100, totalBytesExpected: -1, now: start)) != nil)
        park(&pipeline)
        let next = wokenWith(pipeline.sentBody(totalBytesSent: 250, totalBytesExpected: -1, now: start + 1_000_000))
        #expect(next == TransferProgress(bytes: 150, totalBytes: 250, totalBytesExpected: -1))
    }

    @Test func busyConsumer_getsEveryByteInMergedReports() {
        var pipeline = TaskPipeline(highWatermark: 100, lowWatermark: 10)
        _ = pipeline.resume()
        pipeline.startedSending(expected: 1000)
        // Not parked: reports queue and merge, whatever the time.
        for (index, total) in [100, 300, 600].enumerated() {
            _ = pipeline.sentBody(totalBytesSent: Int64(total), totalBytesExpected: 1000, now: start + UInt64(index))
        }
        guard case .deliver(.uploadProgress(let merged), _) = pipeline.next() else {
            Issue.record("expected the merged progress")
            return
        }
        #expect(merged == TransferProgress(bytes: 600, totalBytes: 600, totalBytesExpected: 1000))
    }
}
