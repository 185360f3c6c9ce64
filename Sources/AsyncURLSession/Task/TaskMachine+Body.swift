internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a hop's body bytes go: held with a response a decision waits on,
/// to the consumer (events or collected), to a download's file, or split
/// into multipart parts. Engine thread, under the task's lock.
extension TaskMachine {
    /// What body bytes of hop `id` lead to.
    enum BodyOutcome {
        case verdict(BodyVerdict, Wake?, ProgressUpdate?)
        /// A download's bytes, counted: the driver queues them on the
        /// file's writer after the lock (a copy and a hand-off to the
        /// writer's queue), then wakes the consumer with the progress.
        case write(DownloadFile, Wake?, ProgressUpdate?)
        /// The download's writer is behind: the bytes are handed back
        /// (`.pause`), and once it drains the exchange reads on.
        case waitForWriter(DownloadFile, (any HopExchange)?)
        /// The held response is the result after all: the driver delivers
        /// it with its body, then these bytes again.
        case release(HTTPURLResponse, Data)
    }

    /// - Parameter core: the task, named by a wake-up that hands the bytes
    ///   over after the engine's read.
    mutating func receivedBody(_ bytes: UnsafeRawBufferPointer, id: HopID, core: TaskCore) -> BodyOutcome {
        guard transferID == id else { return .verdict(.abort(URLError(.cancelled)), nil, nil) }
        switch hop.receivedBody(bytes) {
        case .kept:
            return .verdict(.accepted, nil, nil)
        case .releaseHeld(let response, let body):
            return .release(response, body)
        case .deliver:
            break
        }
        if download != nil {
            return downloadReceived(count: bytes.count)
        }
        if multipart != nil {
            let (verdict, wake) = multipartReceived(bytes, core: core)
            return .verdict(verdict, wake, nil)
        }
        let action: TaskPipeline.BodyAction
        switch pipeline.consumer {
        case .events:
            action = pipeline.receivedBody(
                count: bytes.count,
                makeChunk: { capacity in
                    guard capacity > bytes.count else { return Data(bytes) }
                    var chunk = Data(capacity: capacity)
                    chunk.append(contentsOf: bytes)
                    return chunk
                },
                append: { $0.append(contentsOf: bytes) })
        case .collect:
            action = pipeline.receivedBodyToCollect(count: bytes.count) { $0.append(bytes) }
        }
        let progress = progressUpdate()
        switch action {
        case .accept(.handOffAfterRead): return .verdict(.accepted, .handOffAfterRead(core), progress)
        case .accept(let delivery): return .verdict(.accepted, wake(for: delivery), progress)
        case .pause: return .verdict(.pause, nil, progress)
        case .abort(let error): return .verdict(.abort(error), nil, progress)
        }
    }

    /// Body bytes of a download, counted for its file (its writer queues
    /// them after the lock; a full queue pauses the transfer until it drains).
    mutating func downloadReceived(count: Int) -> BodyOutcome {
        switch pipeline.receivedDownloadBytes(count: count) {
        case .pause: return .verdict(.pause, nil, nil)
        case .abort(let error): return .verdict(.abort(error), nil, nil)
        case .accept: break
        }
        guard let file = download?.file else { return .verdict(.abort(URLError(.cancelled)), nil, nil) }
        if file.isFull {
            // The disk is behind: hand the bytes back and wait for the writer.
            pipeline.undoDownloadBytes(count: count)
            return .waitForWriter(file, exchange)
        }
        let update = progressUpdate()
        guard let progress = download?.progress(
            at: pipeline.bytesReceived, of: pipeline.bytesExpectedToReceive, now: DispatchTime.now().uptimeNanoseconds)
        else { return .write(file, nil, update) }
        return .write(file, wake(for: pipeline.downloadProgress(progress)), update)
    }

    /// Body bytes split into multipart/x-mixed-replace parts: each part's
    /// response (with a decision answering `core`) and bytes.
    mutating func multipartReceived(_ bytes: UnsafeRawBufferPointer, core: TaskCore) -> (BodyVerdict, Wake?) {
        guard multipart != nil else { return (.abort(URLError(.cancelled)), nil) }
        if pipeline.mustPauseBody() { return (.pause, nil) }
        var wake: Wake?
        for part in multipart?.feed(bytes) ?? [] {
            let delivery: TaskPipeline.DeliveryAction
            switch part {
            case .response(let response):
                let decision = ResponseDecision(listener: .part(WeakTaskCore(core: core)))
                delivery = pipeline.receivedResponse(response, decision: decision)
            case .body(let data):
                delivery = pipeline.receivedPartBody(data)
            }
            if wake == nil { wake = self.wake(for: delivery) }
        }
        return (.accepted, wake)
    }

    /// Multipart splitting starts for hop `id`'s response, if the task is
    /// still on that hop and its consumer takes parts (events, not a file).
    mutating func startMultipart(_ parts: MultipartState, id: HopID, isDataTask: Bool) -> Bool {
        guard transferID == id, pipeline.consumer == .events, isDataTask, download == nil else { return false }
        splitBody(into: parts)
        return true
    }

    /// Before a download's response is published: where the file continues
    /// (a 206 for the range asked for continues it; anything else restarts
    /// it), and the `resumed` event for a download from resume data.
    mutating func downloadResponseArrived(_ response: HTTPURLResponse) -> TaskEvent? {
        guard let file = download?.file else { return nil }
        let validator = ResumeData.validator(of: response)
        guard let continuation = download?.responseArrived(
            statusCode: response.statusCode, contentRange: ContentRange(response),
            expectedContentLength: response.expectedContentLength,
            entityTag: validator.entityTag, lastModified: validator.lastModified)
        else { return nil }
        if continuation.restartsFile { file.truncate(to: 0) }
        pipeline.resumedAt(offset: continuation.offset, expectedTotal: continuation.expectedTotal)
        return continuation.resumedEvent
    }

    /// A body written to a file elsewhere (`TaskCore.adoptLocalBody`):
    /// the download takes the file itself, when it can.
    mutating func adoptBody(_ source: URL, length: Int64, id: HopID) -> TaskCore.AdoptedBody {
        guard transferID == id else { return .abort(URLError(.cancelled)) }
        guard hop.held == nil, hop.cacheStage == nil, let file = download?.file, download?.requestedOffset == 0,
            pipeline.bytesReceived == 0, let count = Int(exactly: length)
        else { return .notAdoptable }
        switch pipeline.receivedDownloadBytes(count: count) {
        case .pause: return .pause
        case .abort(let error): return .abort(error)
        case .accept: break
        }
        // Queued under the lock, as the truncation of a restarted file is:
        // before anything the task does next can reach the file's writer.
        file.adopt(source, size: length)
        let update = progressUpdate()
        var wake: Wake?
        if let progress = download?.progress(
            at: length, of: pipeline.bytesExpectedToReceive, now: DispatchTime.now().uptimeNanoseconds)
        {
            wake = self.wake(for: pipeline.downloadProgress(progress))
        }
        return .adopted(file, wake, update)
    }

    /// How far a body written elsewhere got, as download progress.
    mutating func progressWrittenElsewhere(total: Int64, expected: Int64, id: HopID) -> (Wake?, ProgressUpdate?) {
        guard transferID == id, download?.file != nil, download?.requestedOffset == 0,
            let progress = download?.progress(at: total, of: expected, now: DispatchTime.now().uptimeNanoseconds)
        else { return (nil, nil) }
        let update = self.progress.map { ProgressUpdate(progress: $0, total: expected, completed: total) }
        return (wake(for: pipeline.downloadProgress(progress)), update)
    }
}
