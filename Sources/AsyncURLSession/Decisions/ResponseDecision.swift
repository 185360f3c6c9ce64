import Foundation
import Synchronization

/// What to do with a data task's response, as URLSession's
/// `ResponseDisposition`. Body bytes wait (buffered up to the stream's high
/// watermark) until it is settled. Default: allow.
///
/// Settles as any decision does (see `DecisionCore`): an explicit answer, the
/// consumer pulling the next event, or the decision being dropped. Unlike
/// the rarer decisions it keeps its own state instead of a `DecisionCore`,
/// and tells its task directly instead of through a closure: every response
/// an events consumer gets has one. The core and the closure's context were
/// two more allocations made on the engine thread and freed on the
/// consumer's, and settling through the generic core allocated a closure
/// thunk as well.
public final class ResponseDecision: Sendable {
    public enum Answer: Sendable, Equatable {
        case allow
        /// The task completes with `URLError(.cancelled)`.
        case cancel
        /// The rest of the body goes to a file and the task continues as a
        /// download: `downloadProgress` events, then `downloaded(URL)`.
        /// (Ignored by `data(for:)`, which must return the body as Data.)
        case becomeDownload
    }

    /// Who hears the answer.
    enum Listener: Sendable {
        case nobody
        /// The task whose response this is: `cancel` cancels it (or the
        /// response already delivered), `becomeDownload` turns it into a
        /// download. Held strongly: a weak reference would give the task a
        /// side table (an allocation, and slower retains and releases for
        /// its whole life). The cycle ends when the decision settles.
        case task(TaskCore)
        /// One part of a multipart response: `cancel` cancels the task (or
        /// the parts already delivered, as for `task`).
        case part(WeakTaskCore)
    }

    private enum State {
        case pending(Listener)
        case settled(Answer)
    }

    private let state: Mutex<State>
    /// Set once `state` is settled: the deinit of a settled decision (every
    /// `task.events` response's, settled at the next pull) reads it instead
    /// of taking the lock. Relaxed: the deinit runs after the last release
    /// of the decision, which orders it after every settle.
    private let settled = Atomic<Bool>(false)

    init(listener: Listener = .nobody) {
        state = Mutex(.pending(listener))
    }

    deinit {
        if !settled.load(ordering: .relaxed) { settleWithDefault() }
    }

    public func allow() { settle(.allow) }
    public func cancel() { settle(.cancel) }
    public func becomeDownload() { settle(.becomeDownload) }

    public var answer: Answer? {
        state.withLock { state in
            if case .settled(let answer) = state { return answer }
            return nil
        }
    }

    /// Settles with `answer` unless already settled, then tells the listener
    /// (outside the lock, on the calling thread).
    private func settle(_ answer: Answer) {
        let listener = state.withLock { state -> Listener? in
            guard case .pending(let listener) = state else { return nil }
            state = .settled(answer)
            settled.store(true, ordering: .relaxed)
            return listener
        }
        switch listener {
        case .task(let core)?:
            switch answer {
            case .allow: break
            case .cancel: core.cancelAfterResponse()
            case .becomeDownload: core.becomeDownload()
            }
        case .part(let weak)?:
            if answer == .cancel { weak.core?.cancelAfterResponse() }
        case .nobody?, nil:
            break
        }
    }
}

extension ResponseDecision: PendingDecision {
    func settleWithDefault() { settle(.allow) }
    var isSettled: Bool { answer != nil }
}

/// A weak reference to a task, for listeners that must not keep it alive.
struct WeakTaskCore: Sendable {
    weak var core: TaskCore?
}
