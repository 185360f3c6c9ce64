// Completion-handler requests the way a command-line tool or script waits
// for them (`CallbackChains.Style.blockingThreads`): each chain a thread that
// starts a request and blocks on a semaphore until its completion handler
// signals, then starts the next. The waiting thread is never the one the
// handler runs on, so every request pays the hand-offs legacy code really pays.
import Foundation
import Synchronization

enum BlockingChains {
    /// Starts `threads` threads sharing `count` requests; `finished` gets
    /// `tally` with every outcome once the last thread ends.
    static func start(
        count: Int, threads: Int, tally: ClientResult, finished: CheckedContinuation<ClientResult, Never>,
        start: @escaping @Sendable (_ index: Int, _ done: @escaping @Sendable (RequestOutcome) -> Void) -> Void
    ) {
        let indices = IndexDispenser(count: count)
        let run = BlockingRun(threads: threads, tally: tally, finished: finished)
        let (client, workload, api) = (tally.client, tally.workload, tally.api)
        for _ in 0..<threads {
            Thread {
                var partial = ClientResult(client: client, workload: workload, api: api)
                let signal = DispatchSemaphore(value: 0)
                let slot = Mutex<RequestOutcome?>(nil)
                // Bounded: the dispenser hands out `count` indices in all.
                while let index = indices.next() {
                    start(index) { outcome in
                        slot.withLock { $0 = outcome }
                        signal.signal()
                    }
                    signal.wait()
                    if let outcome = slot.withLock({ $0.take() }) { partial.record(outcome) }
                }
                run.threadFinished(with: partial)
            }.start()
        }
    }
}

/// The tally of one run's threads; resumes the run once the last one ends.
private final class BlockingRun: Sendable {
    private let state: Mutex<(tally: ClientResult, running: Int, finished: CheckedContinuation<ClientResult, Never>?)>

    init(threads: Int, tally: ClientResult, finished: CheckedContinuation<ClientResult, Never>) {
        state = Mutex((tally, threads, finished))
    }

    func threadFinished(with partial: ClientResult) {
        let done = state.withLock { state -> (CheckedContinuation<ClientResult, Never>, ClientResult)? in
            state.tally.merge(partial)
            state.running -= 1
            guard state.running == 0, let finished = state.finished else { return nil }
            state.finished = nil
            return (finished, state.tally)
        }
        if let (finished, tally) = done { finished.resume(returning: tally) }
    }
}
