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
    let id: HopID
    /// Where the answer comes from, for the hop's metrics.
    let fetchType: TransactionMetrics.FetchType
    private let delegate: any LocalTransferDelegate
    private let state = Mutex(State())

    private struct State {
        var suspended = false
        /// Set by `resumeReceiving` (cleared before each offer), so a resume
        /// that comes between the task's `.pause` and our wait is not lost.
        var resumeRequested = false
        var waiter: CheckedContinuation<Void, Never>?
        var stopped: URLError?
        var task: Task<Void, Never>?
        var watchdog: Task<Void, Never>?
        /// The responder returned or threw.
        var finished = false
        /// When the responder last made progress (monotonic seconds), for
        /// the idle timeout; nil while the task holds it back (paused or
        /// suspended), which is no idleness of the responder's.
        var lastActivity: Double? = LocalTransfer.now()

        mutating func takeWaiter() -> CheckedContinuation<Void, Never>? {
            defer { waiter = nil }
            return waiter
        }
    }

    init(id: HopID, delegate: any LocalTransferDelegate, fetchType: TransactionMetrics.FetchType) {
        self.id = id
        self.fetchType = fetchType
        self.delegate = delegate
    }

    /// Runs `responder` for `request`. `idleTimeout` bounds the time
    /// without progress from the responder (a stub that never answers times
    /// out as a silent server does), `resourceTimeout` the whole hop; 0 or
    /// infinity: none.
    func start(
        _ responder: any LocalResponder, request: LocalRequest,
        idleTimeout: TimeInterval = 0, resourceTimeout: TimeInterval = 0
    ) {
        let fetchStart = Date()
        let writer = LocalResponseWriter(transfer: self, url: request.url)
        let url = request.url?.absoluteString
        let task = Task { [self] in
            var failure: URLError?
            do throws(URLError) {
                try await responder.respond(to: request, through: writer)
                if !writer.sentHead {
                    failure = URLError.make(
                        .badServerResponse, url: url, reason: "The local responder ended without a response.")
                }
            } catch {
                failure = error
            }
            request.body.close()
            // A stop (cancel, a timeout, a body the task refused) wins over
            // what the responder said after it.
            let (stopped, watchdog) = state.withLock { state in
                state.finished = true
                return (state.stopped, state.watchdog)
            }
            watchdog?.cancel()
            var metrics = TransferMetrics.empty(fetchStart: fetchStart)
            metrics.total = Date().timeIntervalSince(fetchStart)
            metrics.responseBodyBytes = writer.bodyBytes
            let error = (stopped ?? failure).map { $0.namingFailingURL(request.url) }
            delegate.hopDidComplete(TransferOutcome(error: error, metrics: metrics), id: id)
        }
        let idle = idleTimeout > 0 && idleTimeout.isFinite ? idleTimeout : nil
        let resource = resourceTimeout > 0 && resourceTimeout.isFinite ? resourceTimeout : nil
        let watchdog = idle == nil && resource == nil
            ? nil : Task { [self] in await watch(idle: idle, resource: resource, url: url) }
        state.withLock {
            $0.task = task
            $0.watchdog = watchdog
        }
    }

    /// Ends the hop with `.timedOut` once it went `idle` seconds without
    /// progress or `resource` seconds in all.
    private func watch(idle: Double?, resource: Double?, url: String?) async {
        let started = Self.now()
        while !Task.isCancelled {
            let (done, last) = state.withLock { ($0.stopped != nil || $0.finished, $0.lastActivity) }
            if done { return }
            let now = Self.now()
            if let resource, now - started >= resource {
                cancel(error: URLError.make(
                    .timedOut, url: url,
                    reason: "The local responder did not finish within the resource timeout (\(resource) s)."))
                return
            }
            if let idle, let last, now - last >= idle {
                cancel(error: URLError.make(
                    .timedOut, url: url, reason: "No data was received for \(idle) seconds (local responder)."))
                return
            }
            var next = resource.map { started + $0 } ?? .infinity
            if let idle { next = min(next, (last ?? now) + idle) }
            let wait = min(max(next - now, 0.01), 0.25)
            try? await Task.sleep(nanoseconds: UInt64(wait * 1e9))
        }
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Upload progress of the request body the responder reads.
    func reportSent(_ sent: Int64, expected: Int64) {
        noteActivity()
        delegate.hopDidSendBody(totalBytesSent: sent, totalBytesExpected: expected, id: id)
    }

    private func noteActivity() {
        state.withLock { $0.lastActivity = Self.now() }
    }

    func suspend() {
        state.withLock { state in
            state.suspended = true
            state.lastActivity = nil
        }
    }

    func resume() {
        let waiter = state.withLock { state in
            state.suspended = false
            state.lastActivity = Self.now()
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
        let (waiter, task, watchdog) = state.withLock { state in
            if state.stopped == nil, !state.finished { state.stopped = error }
            return (state.takeWaiter(), state.task, state.watchdog)
        }
        waiter?.resume()
        task?.cancel()
        watchdog?.cancel()
    }

    // MARK: - For the writer

    /// Asks the task about `decision` and waits for the answer. The wait is
    /// the handler's, not the responder's idleness, so the idle timeout
    /// does not run meanwhile; a stop (cancel, resource timeout) ends it,
    /// since stopping the task settles its pending decisions.
    func challenge(_ decision: ChallengeDecision) async throws(URLError) -> ChallengeDecision.Answer {
        if let stopped = state.withLock({ $0.stopped }) { throw stopped }
        state.withLock { $0.lastActivity = nil }
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<ChallengeDecision.Answer, Never>) in
            decision.core.onSettle { continuation.resume(returning: $0) }
            delegate.offerLocalChallenge(decision)
        }
        let stopped = state.withLock { state -> URLError? in
            state.lastActivity = Self.now()
            return state.stopped
        }
        if let stopped { throw stopped }
        return answer
    }

    /// Waits while suspended; throws once stopped.
    func proceed() async throws(URLError) {
        while true {
            let ready: Bool? = state.withLock { state in
                if state.stopped != nil { return nil }
                return !state.suspended
            }
            guard let ready else { throw state.withLock { $0.stopped! } }
            if ready { return }
            await heldBack { !$0.suspended || $0.stopped != nil }
        }
    }

    func offer(_ piece: Data) async throws(URLError) {
        try await untilTaken { () -> Offered<Void> in
            switch piece.withUnsafeBytes({ delegate.hopDidReceiveBody($0, id: id) }) {
            case .accepted: return .taken(())
            case .abort(let error): return .abort(error)
            case .pause: return .pause
            }
        }
    }

    /// The body as a whole file written elsewhere: a download takes the file
    /// (false: the caller delivers its bytes instead).
    func offerFile(_ url: URL, length: Int64) async throws(URLError) -> Bool {
        let adopted = try await untilTaken { () -> Offered<DownloadFile?> in
            switch delegate.adoptLocalBody(url, length: length, id: id) {
            case .adopted(let file):
                return .taken(file)
            case .notAdoptable: return .taken(nil)
            case .abort(let error): return .abort(error)
            case .pause: return .pause
            }
        }
        guard let adopted else { return false }
        // Moved before the responder returns (and its writer may remove
        // what is left of the source).
        await withCheckedContinuation { continuation in adopted.flush { _ in continuation.resume() } }
        return true
    }

    /// What the task did with something offered.
    private enum Offered<Value> {
        case taken(Value)
        /// Held back (paused): offered again after `resumeReceiving`.
        case pause
        case abort(URLError)
    }

    /// Offers with `attempt` until the task takes it, waiting while it is
    /// suspended or holds bodies back; a refusal stops the hop.
    private func untilTaken<Value>(_ attempt: () -> Offered<Value>) async throws(URLError) -> Value {
        while true {
            try await proceed()
            state.withLock { $0.resumeRequested = false }
            switch attempt() {
            case .taken(let value):
                noteActivity()
                return value
            case .abort(let error):
                state.withLock { state in
                    if state.stopped == nil { state.stopped = error }
                }
                throw error
            case .pause:
                await heldBack { $0.resumeRequested || $0.stopped != nil }
            }
        }
    }

    /// Progress of a body written elsewhere (a download's only).
    func reportReceived(_ total: Int64, expected: Int64) {
        noteActivity()
        delegate.reportDownloadProgress(total: total, expected: expected, id: id)
    }

    /// The exchange ended at `url` (redirects followed by whoever answered
    /// it): the hop's request names it from now on.
    func moveHop(to url: URL) {
        delegate.hopMoved(to: url, id: id)
    }

    func deliverHead(_ head: consuming ResponseHead) async throws(URLError) {
        try await proceed()
        noteActivity()
        delegate.hopDidReceiveHead(head, id: id)
    }

    func deliverInformationalHead(_ head: consuming ResponseHead) async throws(URLError) {
        try await proceed()
        noteActivity()
        delegate.hopDidReceiveInformationalHead(head, id: id)
    }

    /// Waits while the task holds the hop back (paused or suspended): no
    /// idle time of the responder's.
    private func heldBack(until isReady: @escaping (State) -> Bool) async {
        state.withLock { $0.lastActivity = nil }
        await wait(until: isReady)
        noteActivity()
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
