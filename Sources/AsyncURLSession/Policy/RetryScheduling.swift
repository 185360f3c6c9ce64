import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The task's retry policy (`RetryPolicy`): what the retry rules read of
/// the task, and carrying out a retry they decided. A task without a policy
/// never comes here (`TaskCore.retries` is false).
enum RetryScheduling {
    /// The task's first attempt counts toward its origin's retry budget.
    static func noteFirstAttempt(on task: some PolicyHost) {
        guard let budget = task.machine({ $0.retry?.policy.budget }) else { return }
        task.context.retryLedger.noteRequest(to: RetryLedger.origin(of: task.originalRequest.url), budget: budget)
    }

    /// What the retry rules read of the task after a hop ended; nil when the
    /// task has no retry policy.
    /// - Parameter connected: the hop's transfer had connected.
    static func candidate(on task: some PolicyHost, connected: Bool) -> RetryCandidate? {
        let elapsed = Date().timeIntervalSince(task.createdAt)
        let answersBodyStreams = task.hasHandlers
        guard let (policy, attempts, request, begun, events) = task.machine({ $0.retryInputs() }) else { return nil }
        // A new body stream comes only from someone who answers for it.
        let replayable = !task.resendNeedsBodyStream(request) || events || answersBodyStreams
        return RetryCandidate(
            policy: policy, attemptsMade: attempts, elapsed: elapsed,
            resourceTimeout: task.context.configuration.timeoutIntervalForResource,
            method: (request.httpMethod ?? "GET").uppercased(),
            hasIdempotencyKey: request.value(forHTTPHeaderField: "Idempotency-Key") != nil,
            bodyReplayable: replayable, responseBegun: begun, connected: connected,
            random: Double.random(in: 0..<1), now: Date())
    }

    /// Sends the hop's request again after `attempt.delay` and returns
    /// true, or returns false when the origin's retry budget is spent (the
    /// hop's end is then the task's).
    static func retry(_ attempt: RetryAttempt, on task: some PolicyHost) -> Bool {
        let (request, credential, budget) = task.machine { $0.retryResend }
        let origin = RetryLedger.origin(of: request.url)
        if let budget, !task.context.retryLedger.takeRetry(to: origin, budget: budget) {
            task.log?.decision("retry", "not retried: the retry budget of \(origin) is spent")
            return false
        }
        task.machine { $0.retryStarts() }
        task.log?.decision(
            "retry", "attempt \(attempt.attempt) in \(String(format: "%.3f", attempt.delay)) s after \(attempt.reason.logDescription)")
        task.observation?.retrying(attempt)
        // The events consumer hears of it before the next hop can answer.
        task.announce(.retrying(attempt), consumerFirst: true) { handler, task in
            await handler.task(task, willRetry: attempt)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + attempt.delay) { [weak task] in
            // A task cancelled during the pause has ended: its hop does not start.
            task?.startHop(request, credential: credential)
        }
        return true
    }
}
