internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One hop answered by a `LocalResponder`, told to the task exactly as the
/// engine tells a transfer: head, body pieces (a piece the task does not
/// take is offered again after `resumeReceiving`, as libcurl does after a
/// pause), and one completion, last. Suspend, resume and cancel work as on
/// the engine's transfers.
final class LocalTransfer: Sendable {
    let id: TransferID
    /// Where the answer comes from, for the hop's metrics.
    let fetchType: TransactionMetrics.FetchType
    private let delegate: any TransferDelegate
    private let state = Mutex(State())

    private struct State {
        var suspended = false
        /// Set by `resumeReceiving` (cleared before each offer), so a resume
        /// that comes between the task's `.pause` and our wait is not lost.
        var resumeRequested = false
        var waiter: CheckedContinuation<Void, Never>?
        var stopped: URLError?
        var task: Task<Void, Never>?

        mutating func takeWaiter() -> CheckedContinuation<Void, Never>? {
            defer { waiter = nil }
            return waiter
        }
    }

    init(id: TransferID, delegate: any TransferDelegate, fetchType: TransactionMetrics.FetchType) {
        self.id = id
        self.fetchType = fetchType
        self.delegate = delegate
    }

    func start(_ responder: any LocalResponder, request: URLRequest) {
        let fetchStart = Date()
        let writer = LocalResponseWriter(transfer: self)
        let task = Task { [self] in
            var failure: URLError?
            do throws(URLError) {
                try await responder.respond(to: request, through: writer)
                if !writer.sentHead {
                    failure = URLError.make(
                        .badServerResponse, url: request.url?.absoluteString,
                        reason: "The local responder ended without a response.")
                }
            } catch {
                failure = error
            }
            // A stop (cancel, a body the task refused) wins over what the
            // responder said after it.
            let stopped = state.withLock { $0.stopped }
            var metrics = TransferMetrics.empty(fetchStart: fetchStart)
            metrics.total = Date().timeIntervalSince(fetchStart)
            metrics.responseBodyBytes = writer.bodyBytes
            delegate.transferDidComplete(TransferOutcome(error: stopped ?? failure, metrics: metrics), of: id)
        }
        state.withLock { $0.task = task }
    }

    func suspend() {
        state.withLock { $0.suspended = true }
    }

    func resume() {
        let waiter = state.withLock { state in
            state.suspended = false
            return state.takeWaiter()
        }
        waiter?.resume()
    }

    func resumeReceiving() {
        let waiter = state.withLock { state in
            state.resumeRequested = true
            return state.takeWaiter()
        }
        waiter?.resume()
    }

    func cancel(error: URLError) {
        let (waiter, task) = state.withLock { state in
            if state.stopped == nil { state.stopped = error }
            return (state.takeWaiter(), state.task)
        }
        waiter?.resume()
        task?.cancel()
    }

    // MARK: - For the writer

    /// Waits while suspended; throws once stopped.
    fileprivate func proceed() async throws(URLError) {
        while true {
            let ready: Bool? = state.withLock { state in
                if state.stopped != nil { return nil }
                return !state.suspended
            }
            guard let ready else { throw state.withLock { $0.stopped! } }
            if ready { return }
            await wait { !$0.suspended || $0.stopped != nil }
        }
    }

    fileprivate func offer(_ piece: Data) async throws(URLError) {
        while true {
            try await proceed()
            state.withLock { $0.resumeRequested = false }
            let verdict = piece.withUnsafeBytes { delegate.transferDidReceiveBody($0, of: id) }
            switch verdict {
            case .accepted:
                return
            case .abort(let error):
                state.withLock { state in
                    if state.stopped == nil { state.stopped = error }
                }
                throw error
            case .pause:
                await wait { $0.resumeRequested || $0.stopped != nil }
            }
        }
    }

    fileprivate func deliverHead(_ head: consuming ResponseHead) async throws(URLError) {
        try await proceed()
        delegate.transferDidReceiveHead(head, of: id)
    }

    /// Parks until `isReady` holds (checked under the lock first).
    private func wait(until isReady: @escaping (State) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if isReady(state) { return true }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}

/// What a `LocalResponder` writes its answer with.
final class LocalResponseWriter: Sendable {
    private let transfer: LocalTransfer
    private let progress = Mutex((sentHead: false, bodyBytes: Int64(0)))

    fileprivate init(transfer: LocalTransfer) {
        self.transfer = transfer
    }

    var sentHead: Bool { progress.withLock { $0.sentHead } }
    var bodyBytes: Int64 { progress.withLock { $0.bodyBytes } }

    /// The final response's head. Content-Length, if given, is what the
    /// body pieces must add up to (as on the wire).
    func writeHead(statusCode: Int, httpVersion: String = "HTTP/1.1", fields: CachedHeaderFields) async throws(URLError) {
        let head = ResponseHead(
            statusCode: statusCode, httpVersion: httpVersion,
            fields: ResponseHeaderFields(fields.pairs.map { ($0.name, $0.value) }))
        progress.withLock { $0.sentHead = true }
        try await transfer.deliverHead(head)
    }

    /// The next piece of the body; returns once the task took it (a slow
    /// consumer makes this wait, as it makes the network wait).
    func writeBody(_ piece: Data) async throws(URLError) {
        guard !piece.isEmpty else { return }
        try await transfer.offer(piece)
        progress.withLock { $0.bodyBytes += Int64(piece.count) }
    }
}
