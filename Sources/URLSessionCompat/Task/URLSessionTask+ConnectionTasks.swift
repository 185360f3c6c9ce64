import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What WebSocket and stream tasks, which have no driver, use to reach
/// their delegates and completion handlers.
extension URLSessionTask {
    /// A call that answers nothing, for tasks without a driver (WebSocket,
    /// stream): the task's own delegate, then the session's; the first
    /// that implements the method is called.
    func notify<Delegate>(_ type: Delegate.Type, session: URLSession, _ call: (Delegate) -> Void) {
        for candidate in [delegate, session.delegate].compactMap({ $0 }) {
            guard let delegate = candidate as? Delegate else { continue }
            if !DefaultImplementationMarker.ranDefault({ call(delegate) }) { return }
        }
    }

    /// Runs `work` and hands its result to `completion` on the session's
    /// delegate queue (the completion handlers of WebSocket and stream tasks).
    func answerOnDelegateQueue<Value: Sendable>(
        _ work: @escaping @Sendable () async throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        let queue = session?.delegateQueue
        Task {
            let result: Result<Value, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            if let queue { queue.addOperation { completion(result) } } else { completion(result) }
        }
    }
}

extension URLSessionTask {
    /// The core handler for a WebSocket or stream task's TLS challenges
    /// when a delegate may answer them (as for data tasks: the session has
    /// a delegate not known to ignore them, or the task has one); nil
    /// otherwise, so default verification costs no extra handshake.
    func connectionChallengeHandler() -> (@Sendable (ChallengeDecision) async -> Void)? {
        guard let session, delegate != nil || session.delegateMayAnswerTLSChallenges else { return nil }
        return { [weak self] decision in await self?.askDelegates(decision, session: session) }
    }

    /// Asks on the task's lane: the session-level challenge method first,
    /// then the task-level one (the task's delegate, then the session's).
    /// Returns once one answered, or at once when none implements either
    /// (default handling, which the core then applies).
    private func askDelegates(_ decision: ChallengeDecision, session: URLSession) async {
        let challenge = ChallengeBridge.challenge(for: decision)
        let lane = laneMakingIt(with: session.makeDelegateLane)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lane.post { [self] in
                let answered: @Sendable (ChallengeAnswer) -> Void = { answer in
                    ChallengeBridge.answer(decision, with: answer.disposition, credential: answer.credential)
                    continuation.resume()
                }
                if let sessionDelegate = session.delegate {
                    let gate = AnswerGate(forward: answered)
                    let skipped = DefaultImplementationMarker.ranDefault {
                        sessionDelegate.urlSession(session, didReceive: challenge) { gate.pass(ChallengeAnswer($0, $1)) }
                    }
                    if !skipped { return gate.open() }
                }
                for candidate in [delegate, session.delegate].compactMap({ $0 as? any URLSessionTaskDelegate }) {
                    let gate = AnswerGate(forward: answered)
                    let skipped = DefaultImplementationMarker.ranDefault {
                        candidate.urlSession(session, task: self, didReceive: challenge) { gate.pass(ChallengeAnswer($0, $1)) }
                    }
                    if !skipped { return gate.open() }
                }
                if delegate == nil { session.noteDelegateIgnoresTLSChallenges() }
                continuation.resume()
            }
        }
    }
}
