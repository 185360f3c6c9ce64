import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The task's retry policy (`RetryPolicy`): what the retry rules read of
/// the task, and carrying out a retry they decided. A task without a policy
/// never comes here (`retries` is false).
extension TaskCore {
    /// The task's first attempt counts toward its origin's retry budget.
    func noteFirstAttempt() {
        guard let budget = guarded.withLock({ $0.retry?.policy.budget }) else { return }
        context.retryLedger.noteRequest(to: RetryLedger.origin(of: originalRequest.url), budget: budget)
    }

    /// What the retry rules read of the task after a hop ended; nil when the
    /// task has no retry policy.
    /// - Parameter connected: the hop's transfer had connected.
    func retryCandidate(connected: Bool) -> RetryCandidate? {
        guard retries.load(ordering: .relaxed) else { return nil }
        let elapsed = Date().timeIntervalSince(createdAt)
        let answersBodyStreams = hasHandlers
        guard let (policy, attempts, request, begun, events) = guarded.withLock({ $0.retryInputs() }) else { return nil }
        // A new body stream comes only from someone who answers for it.
        let replayable = !resendNeedsBodyStream(request) || events || answersBodyStreams
        return RetryCandidate(
            policy: policy, attemptsMade: attempts, elapsed: elapsed,
            resourceTimeout: context.configuration.timeoutIntervalForResource,
            method: (request.httpMethod ?? "GET").uppercased(),
            hasIdempotencyKey: request.value(forHTTPHeaderField: "Idempotency-Key") != nil,
            bodyReplayable: replayable, responseBegun: begun, connected: connected,
            random: Double.random(in: 0..<1), now: Date())
    }

    /// Sends the hop's request again after `attempt.delay` and returns
    /// true, or returns false when the origin's retry budget is spent (the
    /// hop's end is then the task's).
    func retry(_ attempt: RetryAttempt) -> Bool {
        let (request, credential, budget) = guarded.withLock { $0.retryResend }
        let origin = RetryLedger.origin(of: request.url)
        if let budget, !context.retryLedger.takeRetry(to: origin, budget: budget) {
            log?.decision("retry", "not retried: the retry budget of \(origin) is spent")
            return false
        }
        guarded.withLock { $0.retryStarts() }
        log?.decision("retry", "attempt \(attempt.attempt) in \(Self.seconds(attempt.delay)) s after \(attempt.reason.logDescription)")
        observation?.retrying(attempt)
        announce(attempt)
        DispatchQueue.global().asyncAfter(deadline: .now() + attempt.delay) { [weak self] in
            // A task cancelled during the pause has ended: its hop does not start.
            self?.startHop(request, credential: credential)
        }
        return true
    }

    /// Tells the handlers, and an events consumer.
    private func announce(_ attempt: RetryAttempt) {
        let (wake, owner) = guarded.withLock { $0.announceRetry(attempt) }
        wake?.run(by: self)
        let handlers = [delegate, context.delegate].compactMap { $0 }
        guard !handlers.isEmpty, let owner else { return }
        Task {
            for handler in handlers { await handler.task(owner, willRetry: attempt) }
        }
    }

    private static func seconds(_ value: TimeInterval) -> String {
        String(format: "%.3f", value)
    }
}
