import Foundation
import Testing

@testable import AsyncURLSession

/// The task state machine on its own: no engine, no network.
@Suite struct TaskPipelineTests {
    private func runningPipeline(high: Int = 100, low: Int = 10) -> TaskPipeline {
        var pipeline = TaskPipeline(highWatermark: high, lowWatermark: low)
        #expect(pipeline.resume() == .startTransfer)
        return pipeline
    }

    private func response() -> HTTPURLResponse {
        HTTPURLResponse(url: URL(string: "http://127.0.0.1/")!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
    }

    @Test func resume_whenCreated_startsTransferOnce() {
        var pipeline = TaskPipeline(highWatermark: 10, lowWatermark: 1)
        #expect(pipeline.state == .suspended)
        #expect(pipeline.resume() == .startTransfer)
        #expect(pipeline.state == .running)
        #expect(pipeline.resume() == .none)
    }

    @Test func suspend_thenResume_pausesAndResumesTransfer() {
        var pipeline = runningPipeline()
        #expect(pipeline.suspend() == .suspendTransfer)
        #expect(pipeline.state == .suspended)
        #expect(pipeline.suspend() == .none)
        #expect(pipeline.resume() == .resumeTransfer)
        #expect(pipeline.state == .running)
    }

    @Test func cancelDeliveredResponse_afterAFailedEnd_dropsTheQueuedBody() {
        var pipeline = runningPipeline(high: 10_000)
        _ = pipeline.receivedResponse(response(), decision: ResponseDecision())
        _ = pipeline.receivedBody(count: 5) { Data(count: 5) }
        _ = pipeline.finish(error: URLError(.networkConnectionLost), metrics: nil)
        guard case .deliver(.response, _)? = pipeline.nextIfReady() else { Issue.record("expected the response"); return }
        let dropped = pipeline.cancelDeliveredResponse(error: URLError(.cancelled))
        #expect(dropped?.count == 1)
        guard case .failStream(let error)? = pipeline.nextIfReady() else {
            Issue.record("a body chunk reached the consumer after cancel")
            return
        }
        #expect(error.code == .cancelled)
    }

    @Test func suspend_beforeStart_doesNothing() {
        var pipeline = TaskPipeline(highWatermark: 10, lowWatermark: 1)
        #expect(pipeline.suspend() == .none)
        #expect(pipeline.resume() == .startTransfer)
    }

    @Test func body_whenConsumerWaiting_isHandedOverAfterTheRead() {
        var pipeline = runningPipeline()
        guard case .wait = pipeline.next() else { Issue.record("expected wait"); return }
        let action = pipeline.receivedBody(count: 5) { Data(count: 5) }
        guard case .accept(.handOffAfterRead) = action else {
            Issue.record("expected a hand-off after the read, got \(action)")
            return
        }
        guard case .deliver(.data(let chunk), _)? = pipeline.handOffQueued() else {
            Issue.record("the parked consumer was not handed the queued bytes")
            return
        }
        #expect(chunk.count == 5)
        #expect(pipeline.handOffQueued() == nil, "handed over twice")
    }

    @Test func handOff_afterTheConsumerWasReachedOtherwise_doesNothing() {
        var pipeline = runningPipeline()
        guard case .wait = pipeline.next() else { Issue.record("expected wait"); return }
        _ = pipeline.receivedBody(count: 5) { Data(count: 5) }
        // Cancelled before the read's hand-off ran: the consumer gets the end instead.
        guard case .cancelTransfer = pipeline.cancel(error: URLError(.cancelled)) else {
            Issue.record("expected the transfer to be stopped")
            return
        }
        guard case .endStream(let error) = pipeline.finish(error: nil, metrics: nil) else {
            Issue.record("expected the parked consumer to be ended")
            return
        }
        #expect(error?.code == .cancelled)
        #expect(pipeline.handOffQueued() == nil)
    }

    @Test func nextIfReady_takesAQueuedEvent_andOtherwiseDoesNotParkTheConsumer() {
        var pipeline = runningPipeline()
        if let action = pipeline.nextIfReady() { Issue.record("nothing is queued yet, got \(action)") }
        // Not parked: the body is queued, not handed over.
        let action = pipeline.receivedBody(count: 5) { Data(count: 5) }
        guard case .accept(.none) = action else {
            Issue.record("expected the body queued, got \(action)")
            return
        }
        guard case .deliver(.data(let chunk), _) = pipeline.nextIfReady() else {
            Issue.record("expected the queued chunk")
            return
        }
        #expect(chunk.count == 5)
        if let action = pipeline.nextIfReady() { Issue.record("the queue is empty again, got \(action)") }
    }

    @Test func yield_whenBufferAboveHighWatermark_pausesTransfer() {
        var pipeline = runningPipeline(high: 100, low: 10)
        guard case .accept = pipeline.receivedBody(count: 60, makeChunk: { Data(count: 60) }) else {
            Issue.record("first chunk should be taken"); return
        }
        guard case .accept = pipeline.receivedBody(count: 60, makeChunk: { Data(count: 60) }) else {
            Issue.record("second chunk should be taken (buffer was below high)"); return
        }
        var copied = false
        guard case .pause = pipeline.receivedBody(count: 60, makeChunk: { copied = true; return Data(count: 60) }) else {
            Issue.record("third chunk should pause"); return
        }
        #expect(!copied, "a refused chunk must not be copied")
        #expect(pipeline.receivePaused)
    }

    @Test func next_whenDrainedBelowLowWatermark_resumesReceivingOnce() {
        var pipeline = runningPipeline(high: 120, low: 60)
        for _ in 0..<3 { _ = pipeline.receivedBody(count: 50) { Data(count: 50) } }
        guard case .pause = pipeline.receivedBody(count: 50, makeChunk: { Data(count: 50) }) else {
            Issue.record("expected pause"); return
        }
        // 150 buffered: popping one leaves 100 (> low), popping two leaves 50 (<= low).
        guard case .deliver(_, let first) = pipeline.next() else { Issue.record("expected event"); return }
        #expect(first == false)
        guard case .deliver(_, let second) = pipeline.next() else { Issue.record("expected event"); return }
        #expect(second == true)
        guard case .deliver(_, let third) = pipeline.next() else { Issue.record("expected event"); return }
        #expect(third == false)
    }

    @Test func events_areDeliveredInOrder_thenMetrics_thenEnd() {
        var pipeline = runningPipeline(high: 1000, low: 10)
        _ = pipeline.receivedResponse(response(), decision: ResponseDecision())
        _ = pipeline.receivedBody(count: 3) { Data([1, 2, 3]) }
        let metrics = TaskMetrics(taskInterval: DateInterval(), redirectCount: 0, transactionMetrics: [])
        _ = pipeline.finish(error: nil, metrics: metrics)
        #expect(pipeline.state == .completed)
        var kinds: [String] = []
        loop: while true {
            switch pipeline.next() {
            case .deliver(.response, _), .deliver(.informationalResponse, _): kinds.append("response")
            case .deliver(.data, _): kinds.append("data")
            case .deliver(.metrics, _): kinds.append("metrics")
            case .deliver(.trailers, _): kinds.append("trailers")
            case .deliver(.redirect, _), .deliver(.challenge, _), .deliver(.needBodyStream, _),
                .deliver(.willCacheResponse, _):
                kinds.append("decision")
            case .deliver(.uploadProgress, _), .deliver(.downloadProgress, _): kinds.append("progress")
            case .deliver(.downloaded, _), .deliver(.resumed, _): kinds.append("download")
            case .deliver(.waitingForConnectivity, _), .deliver(.retrying, _): kinds.append("waiting")
            case .finishStream: kinds.append("end"); break loop
            case .failStream, .wait: Issue.record("unexpected"); break loop
            }
        }
        #expect(kinds == ["response", "data", "metrics", "end"])
    }

    @Test func finish_withError_failsStreamAfterQueuedEvents() {
        var pipeline = runningPipeline()
        _ = pipeline.receivedResponse(response(), decision: ResponseDecision())
        _ = pipeline.finish(error: URLError(.networkConnectionLost), metrics: nil)
        guard case .deliver(.response, _) = pipeline.next() else { Issue.record("expected response"); return }
        guard case .failStream(let error) = pipeline.next() else { Issue.record("expected failure"); return }
        #expect(error.code == .networkConnectionLost)
        #expect(pipeline.error?.code == .networkConnectionLost)
    }

    @Test func finish_whenConsumerWaitingAndNoMetrics_endsStreamDirectly() {
        var pipeline = runningPipeline()
        guard case .wait = pipeline.next() else { Issue.record("expected wait"); return }
        guard case .endStream(let error) = pipeline.finish(error: nil, metrics: nil) else {
            Issue.record("expected endStream"); return
        }
        #expect(error == nil)
    }

    @Test func cancel_whileRunning_dropsBufferedBytesAndAbortsFurtherBody() {
        var pipeline = runningPipeline(high: 1000, low: 10)
        _ = pipeline.receivedBody(count: 10) { Data(count: 10) }
        guard case .cancelTransfer = pipeline.cancel(error: URLError(.cancelled)) else {
            Issue.record("expected cancelTransfer"); return
        }
        #expect(pipeline.state == .canceling)
        guard case .abort(let error) = pipeline.receivedBody(count: 10, makeChunk: { Data(count: 10) }) else {
            Issue.record("expected abort"); return
        }
        #expect(error.code == .cancelled)
        guard case .wait = pipeline.next() else { Issue.record("buffer should be empty"); return }
    }

    /// Bug: the transfer completed on the engine thread while the cancel was
    /// on its way; the task ended as a success with its body dropped.
    @Test func cancel_thenTransferCompletesCleanly_endsCancelled() {
        var pipeline = runningPipeline(high: 1000, low: 10)
        _ = pipeline.receivedBody(count: 10) { Data(count: 10) }
        guard case .cancelTransfer = pipeline.cancel(error: URLError(.cancelled)) else {
            Issue.record("expected cancelTransfer"); return
        }
        _ = pipeline.finish(error: nil, metrics: nil)
        #expect(pipeline.error?.code == .cancelled)
    }

    @Test func cancel_beforeStart_finishesWithoutTransfer() {
        var pipeline = TaskPipeline(highWatermark: 10, lowWatermark: 1)
        guard case .finishWithoutTransfer = pipeline.cancel(error: URLError(.cancelled)) else {
            Issue.record("expected finishWithoutTransfer"); return
        }
        #expect(pipeline.state == .completed)
        #expect(pipeline.resume() == .none)
        guard case .failStream(let error) = pipeline.next() else { Issue.record("expected failure"); return }
        #expect(error.code == .cancelled)
    }

    @Test func collect_overLimit_abortsWithDataLengthExceedsMaximum() {
        var pipeline = TaskPipeline(highWatermark: 10, lowWatermark: 1)
        pipeline.collectBody(limit: 8)
        _ = pipeline.resume()
        guard case .accept = pipeline.receivedBodyToCollect(count: 5, append: { $0.append(Data(count: 5)) }) else {
            Issue.record("expected accept"); return
        }
        guard case .abort(let error) = pipeline.receivedBodyToCollect(count: 5, append: { $0.append(Data(count: 5)) })
        else { Issue.record("expected abort"); return }
        #expect(error.code == .dataLengthExceedsMaximum)
        #expect(pipeline.collectedBody.count == 5)
    }
}

extension TaskPipeline {
    /// Body bytes as the engine delivers them; `makeChunk` runs only when
    /// the bytes are taken.
    fileprivate mutating func receivedBody(count: Int, makeChunk: () -> Data) -> BodyAction {
        receivedBody(
            count: count,
            makeChunk: { capacity in
                var chunk = Data(capacity: capacity)
                chunk.append(makeChunk())
                return chunk
            },
            append: { $0.append(makeChunk()) })
    }
}

/// Body chunks that queue up behind a busy consumer coalesce, in order,
/// without growing past the room reserved for them.
@Suite struct EventQueueCoalescingTests {
    private func runningPipeline() -> TaskPipeline {
        var pipeline = TaskPipeline(highWatermark: 1 << 20, lowWatermark: 1 << 10)
        _ = pipeline.resume()
        return pipeline
    }

    private func write(_ pipeline: inout TaskPipeline, _ bytes: [UInt8]) -> TaskPipeline.BodyAction {
        pipeline.receivedBody(count: bytes.count) { Data(bytes) }
    }

    private func chunks(_ pipeline: inout TaskPipeline) -> [Data] {
        var result: [Data] = []
        while case .deliver(let event, _) = pipeline.next() {
            if case .data(let chunk) = event { result.append(chunk) }
        }
        return result
    }

    @Test func fullWrites_behindTheConsumer_coalesceIntoOneChunkPerRead() {
        var pipeline = runningPipeline()
        let full = TaskPipeline.fullWrite
        let writes = (0..<6).map { index in [UInt8](repeating: UInt8(index), count: full) }
        for bytes in writes { _ = write(&pipeline, bytes) }
        let received = chunks(&pipeline)
        // 4 full writes fill one 64 KiB chunk; the 5th starts the next.
        #expect(received.map(\.count) == [4 * full, 2 * full])
        #expect(received.reduce(Data(), +) == Data(writes.joined()))
    }

    @Test func shortWrite_isNotGivenRoom_andTheNextWriteStartsAChunk() {
        var pipeline = runningPipeline()
        _ = write(&pipeline, [1, 2, 3])
        _ = write(&pipeline, [4, 5])
        #expect(chunks(&pipeline) == [Data([1, 2, 3]), Data([4, 5])])
    }

    @Test func writesOfOneRead_reachAParkedConsumerAsOneChunk() {
        var pipeline = runningPipeline()
        guard case .wait = pipeline.next() else { Issue.record("expected wait"); return }
        let full = TaskPipeline.fullWrite
        let writes = (0..<4).map { index in [UInt8](repeating: UInt8(index), count: full) }
        let actions = writes.map { write(&pipeline, $0) }
        guard case .accept(.handOffAfterRead) = actions[0] else {
            Issue.record("the first write did not ask for a hand-off: \(actions[0])")
            return
        }
        for action in actions.dropFirst() {
            guard case .accept(.none) = action else { Issue.record("a later write woke again: \(action)"); return }
        }
        guard case .deliver(.data(let chunk), _)? = pipeline.handOffQueued() else {
            Issue.record("nothing handed over")
            return
        }
        #expect(chunk == Data(writes.joined()))
    }

    @Test func chunkTakenByTheConsumer_isNeverAppendedTo() {
        var pipeline = runningPipeline()
        let full = [UInt8](repeating: 7, count: TaskPipeline.fullWrite)
        _ = write(&pipeline, full)
        let first = chunks(&pipeline)  // drains, then parks the consumer
        guard case .accept(.handOffAfterRead) = write(&pipeline, full) else {
            Issue.record("the parked consumer was not to be handed the next bytes")
            return
        }
        guard case .deliver(.data(let handedOver), _)? = pipeline.handOffQueued() else {
            Issue.record("nothing handed over")
            return
        }
        _ = write(&pipeline, [9])
        #expect(first == [Data(full)], "the chunk the consumer held changed")
        #expect(handedOver == Data(full), "the chunk the consumer holds changed")
        #expect(chunks(&pipeline) == [Data([9])])
    }

    @Test func otherEvent_closesTheOpenChunk() {
        var pipeline = runningPipeline()
        let full = [UInt8](repeating: 1, count: TaskPipeline.fullWrite)
        _ = write(&pipeline, full)
        _ = pipeline.downloadProgress(TransferProgress(bytes: 1, totalBytes: 1, totalBytesExpected: 2))
        _ = write(&pipeline, [2])
        var events: [String] = []
        while case .deliver(let event, _) = pipeline.next() {
            if case .data(let chunk) = event { events.append("data \(chunk.count)") } else { events.append("other") }
        }
        #expect(events == ["data \(TaskPipeline.fullWrite)", "other", "data 1"])
    }
}
