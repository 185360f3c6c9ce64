internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The owner of one task's `TaskPipeline`: it applies transitions under a
/// lock, keeps the parked consumer's continuation, and carries out the
/// pipeline's actions (engine commands, waking the consumer) after the lock is
/// released. It is the engine's `TransferDelegate` for the task.
///
/// Body bytes go engine thread -> `transferDidReceiveBody` -> the pipeline's
/// buffer -> the consumer; they never pass through the `Session` actor.
final class TaskCore: TransferDelegate, Sendable {
    let identifier: Int
    let context: SessionContext
    let originalRequest: URLRequest
    private let prepared: Result<TransferRequest, URLError>
    private let transferID: TransferID
    private let createdAt = Date()
    private let guarded: Mutex<Guarded>

    private struct Guarded: ~Copyable {
        var pipeline: TaskPipeline
        var eventWaiter: CheckedContinuation<TaskEvent?, any Error>?
        var collectWaiter: CheckedContinuation<Void, any Error>?
        var progress: Progress?
        var taskDescription: String?
        var priority: Float = 0.5
    }

    /// - Parameter refused: set for a task asked of an invalidated session; it
    ///   fails with a clear error when resumed.
    init(identifier: Int, context: SessionContext, request: URLRequest, refused: Bool = false) {
        self.identifier = identifier
        self.context = context
        self.originalRequest = request
        if refused {
            self.prepared = .failure(URLError.make(
                .cancelled, url: request.url?.absoluteString,
                reason: "The session was invalidated; create a new Session for new tasks."))
        } else {
            self.prepared = RequestPreparation.transferRequest(for: request, configuration: context.configuration)
        }
        self.transferID = CurlEngine.shared.makeTransferID()
        let configuration = context.configuration
        guarded = Mutex(Guarded(pipeline: TaskPipeline(
            highWatermark: configuration.streamBufferHighWatermark,
            lowWatermark: configuration.streamBufferLowWatermark)))
    }

    private var engine: CurlEngine { CurlEngine.shared }

    private var failingURLString: String? { originalRequest.url?.absoluteString }

    // MARK: - Observed state

    var state: TaskState { guarded.withLock { $0.pipeline.state } }
    var response: HTTPURLResponse? { guarded.withLock { $0.pipeline.response } }
    var error: URLError? { guarded.withLock { $0.pipeline.error } }
    var metrics: TaskMetrics? { guarded.withLock { $0.pipeline.metrics } }
    var countOfBytesReceived: Int64 { guarded.withLock { $0.pipeline.bytesReceived } }
    var countOfBytesExpectedToReceive: Int64 { guarded.withLock { $0.pipeline.bytesExpectedToReceive } }
    var countOfBytesSent: Int64 { guarded.withLock { $0.pipeline.bytesSent } }
    var countOfBytesExpectedToSend: Int64 {
        guard case .success(let request) = prepared else { return 0 }
        return request.bodyLength ?? -1
    }

    var taskDescription: String? {
        get { guarded.withLock { $0.taskDescription } }
        set { guarded.withLock { $0.taskDescription = newValue } }
    }

    var priority: Float {
        get { guarded.withLock { $0.priority } }
        set { guarded.withLock { $0.priority = min(max(newValue, 0), 1) } }
    }

    /// Created on first use, then kept current by the body callbacks.
    var progress: Progress {
        guarded.withLock { guarded in
            if let progress = guarded.progress { return progress }
            let progress = Progress(totalUnitCount: guarded.pipeline.bytesExpectedToReceive)
            progress.completedUnitCount = guarded.pipeline.bytesReceived
            guarded.progress = progress
            return progress
        }
    }

    // MARK: - Control

    func resume() {
        let action = guarded.withLock { $0.pipeline.resume() }
        switch action {
        case .startTransfer:
            switch prepared {
            case .success(let request):
                engine.start(transferID, in: context.engineID, request: request, delegate: self)
            case .failure(let error):
                complete(error: error, metrics: nil)
            }
        case .resumeTransfer:
            engine.resume(transferID, in: context.engineID)
        case .none:
            break
        }
    }

    func suspend() {
        if case .suspendTransfer = guarded.withLock({ $0.pipeline.suspend() }) {
            engine.suspend(transferID, in: context.engineID)
        }
    }

    func cancel() {
        let error = URLError.make(.cancelled, url: failingURLString, reason: "The task was cancelled.")
        let (action, wake) = guarded.withLock { guarded -> (TaskPipeline.CancelAction, Wake?) in
            let action = guarded.pipeline.cancel(error: error)
            guard case .finishWithoutTransfer(let end) = action else { return (action, nil) }
            return (action, Self.wake(for: end, in: &guarded))
        }
        switch action {
        case .cancelTransfer:
            engine.cancel(transferID, in: context.engineID, error: error)
        case .finishWithoutTransfer:
            context.unregister(identifier)
            wake?.run()
        case .none:
            break
        }
    }

    /// Makes `collect()` the consumer. Must be called before `resume()`.
    func useCollectingConsumer() {
        let limit = context.configuration.maximumCollectedBodySize
        guarded.withLock { $0.pipeline.collectBody(limit: limit) }
    }

    // MARK: - Consumers

    /// The next event for `task.events`; nil at the end. Cancelling the calling
    /// Swift task cancels the transfer.
    func nextEvent() async throws -> TaskEvent? {
        if Task.isCancelled { cancel() }
        let event = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<TaskEvent?, any Error>) in
                let action = guarded.withLock { guarded -> TaskPipeline.NextAction in
                    let action = guarded.pipeline.next()
                    if case .wait = action { guarded.eventWaiter = continuation }
                    return action
                }
                switch action {
                case .deliver(let event, let resumeReceiving):
                    if resumeReceiving { engine.resumeReceiving(transferID, in: context.engineID) }
                    continuation.resume(returning: event)
                case .finishStream:
                    continuation.resume(returning: nil)
                case .failStream(let error):
                    continuation.resume(throwing: error)
                case .wait:
                    break
                }
            }
        } onCancel: {
            self.cancel()
        }
        // A cancelled consumer gets the cancellation as an error, not a quiet
        // end: AsyncThrowingStream(unfolding:) would otherwise finish normally.
        if Task.isCancelled, event != nil {
            throw error ?? URLError.make(.cancelled, url: failingURLString, reason: "The task was cancelled.")
        }
        return event
    }

    /// Waits for the whole body (after `useCollectingConsumer()` and `resume()`).
    func collect() async throws -> (Data, HTTPURLResponse) {
        if Task.isCancelled { cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let end = guarded.withLock { guarded -> Result<Void, URLError>? in
                    if let end = guarded.pipeline.end { return end }
                    guarded.collectWaiter = continuation
                    return nil
                }
                if let end { continuation.resume(with: end) }
            }
        } onCancel: {
            self.cancel()
        }
        return try guarded.withLock { guarded in
            guard let response = guarded.pipeline.response else {
                throw URLError.make(
                    .badServerResponse, url: failingURLString, reason: "The transfer ended without a response.")
            }
            return (guarded.pipeline.collectedBody, response)
        }
    }

    // MARK: - TransferDelegate (engine thread)

    func transferDidReceiveHead(_ head: ResponseHead) {
        let url = originalRequest.url ?? URL(fileURLWithPath: "/")
        guard let response = ResponseConversion.httpResponse(head, url: url) else { return }
        let wake = guarded.withLock { guarded in
            let action = guarded.pipeline.receivedResponse(response)
            if let progress = guarded.progress {
                progress.totalUnitCount = guarded.pipeline.bytesExpectedToReceive
            }
            return Self.wake(for: action, in: &guarded)
        }
        wake?.run()
    }

    func transferDidReceiveBody(_ bytes: UnsafeRawBufferPointer) -> BodyVerdict {
        let (action, wake) = guarded.withLock { guarded in
            let action: TaskPipeline.BodyAction
            switch guarded.pipeline.consumer {
            case .events:
                action = guarded.pipeline.receivedBody(count: bytes.count) { Data(bytes) }
            case .collect:
                action = guarded.pipeline.receivedBodyToCollect(count: bytes.count) { $0.append(contentsOf: bytes) }
            }
            if let progress = guarded.progress {
                progress.completedUnitCount = guarded.pipeline.bytesReceived
            }
            var wake: Wake?
            if case .accept(let delivery) = action {
                wake = Self.wake(for: delivery, in: &guarded)
            }
            return (action, wake)
        }
        switch action {
        case .accept:
            wake?.run()
            return .accepted
        case .pause:
            return .pause
        case .abort(let error):
            return .abort(error)
        }
    }

    func transferDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64) {
        guarded.withLock {
            $0.pipeline.sentBody(totalBytesSent: totalBytesSent, totalBytesExpected: totalBytesExpected)
        }
    }

    func transferDidComplete(_ outcome: TransferOutcome) {
        let response = guarded.withLock { $0.pipeline.response }
        let metrics = ResponseConversion.taskMetrics(
            outcome.metrics, request: originalRequest, response: response, taskStart: createdAt)
        complete(error: outcome.error, metrics: metrics)
    }

    // MARK: - Ending

    private func complete(error: URLError?, metrics: TaskMetrics?) {
        let wake = guarded.withLock { guarded in
            Self.wake(for: guarded.pipeline.finish(error: error, metrics: metrics), in: &guarded)
        }
        context.unregister(identifier)
        wake?.run()
    }

    /// A parked consumer to resume, taken out of the lock together with what
    /// it gets, and resumed after the lock is released.
    private enum Wake {
        case event(CheckedContinuation<TaskEvent?, any Error>, Result<TaskEvent?, URLError>)
        case collect(CheckedContinuation<Void, any Error>, Result<Void, URLError>)

        func run() {
            switch self {
            case .event(let continuation, let result): continuation.resume(with: result)
            case .collect(let continuation, let result): continuation.resume(with: result)
            }
        }
    }

    private static func wake(for action: TaskPipeline.DeliveryAction, in guarded: inout Guarded) -> Wake? {
        guard case .wakeConsumer(let event) = action, let waiter = guarded.eventWaiter else { return nil }
        guarded.eventWaiter = nil
        return .event(waiter, .success(event))
    }

    private static func wake(for action: TaskPipeline.EndAction, in guarded: inout Guarded) -> Wake? {
        switch action {
        case .wakeConsumer(let event):
            guard let waiter = guarded.eventWaiter else { return nil }
            guarded.eventWaiter = nil
            return .event(waiter, .success(event))
        case .endStream(let error):
            guard let waiter = guarded.eventWaiter else { return nil }
            guarded.eventWaiter = nil
            return .event(waiter, error.map { .failure($0) } ?? .success(nil))
        case .completeCollect:
            guard let waiter = guarded.collectWaiter, let end = guarded.pipeline.end else { return nil }
            guarded.collectWaiter = nil
            return .collect(waiter, end)
        case .none:
            return nil
        }
    }
}

