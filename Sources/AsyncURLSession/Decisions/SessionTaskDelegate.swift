import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers a task's decisions without iterating `events`, as the per-task
/// delegate of Apple's async API (`data(for:delegate:)`) or a session's
/// delegate. Every method has a default that leaves the decision unanswered:
/// the next handler (the session's), then the events consumer, then the
/// decision's default take over.
///
/// Order: the task's delegate, then the session's, then `task.events`.
/// Methods run on a concurrent executor; the transfer waits until they return.
public protocol SessionTaskDelegate: AnyObject, Sendable {
    func task(_ task: SessionTask, willPerformRedirection decision: RedirectDecision) async
    func task(_ task: SessionTask, didReceive challenge: ChallengeDecision) async
    func task(_ task: SessionTask, didReceive response: HTTPURLResponse, decision: ResponseDecision) async
    func task(_ task: SessionTask, needsBodyStream decision: BodyStreamDecision) async
    func task(_ task: SessionTask, willCacheResponse decision: CacheDecision) async
    /// The task cannot connect and waits for connectivity
    /// (`waitsForConnectivity`): once per task, before its first retry.
    func taskIsWaitingForConnectivity(_ task: SessionTask) async
    /// An attempt ended and, by the task's `RetryPolicy`, another follows
    /// after `attempt.delay` seconds. For telling only: the retry does
    /// not wait for this to return.
    func task(_ task: SessionTask, willRetry attempt: RetryAttempt) async
}

extension SessionTaskDelegate {
    public func task(_ task: SessionTask, willPerformRedirection decision: RedirectDecision) async {}
    public func task(_ task: SessionTask, didReceive challenge: ChallengeDecision) async {}
    public func task(_ task: SessionTask, didReceive response: HTTPURLResponse, decision: ResponseDecision) async {}
    public func task(_ task: SessionTask, needsBodyStream decision: BodyStreamDecision) async {}
    public func task(_ task: SessionTask, willCacheResponse decision: CacheDecision) async {}
    public func taskIsWaitingForConnectivity(_ task: SessionTask) async {}
    public func task(_ task: SessionTask, willRetry attempt: RetryAttempt) async {}
}
