// Runs `count` requests through a completion-handler API the way a
// command-line tool or script does: `concurrency` threads, each starting a
// request and blocking on a semaphore until its completion handler signals,
// then starting the next. The waiting thread is never the one the handler
// runs on, so every request pays the hand-offs legacy code really pays.
import Foundation
import Synchronization

public enum BlockingChains {
    /// `start(i, done)` starts request i and calls `done` once, from any
    /// thread, with its outcome. Returns `result` with the counts and the
    /// elapsed time filled in, once every thread has finished.
    /// With `--count-warmup W`, W requests first, then the measured ones
    /// counted (`CountWindow`, as `BoundedConcurrency.measure`).
    public static func measure(
        client: String, api: String, arguments: ClientArguments,
        lockAcquisitions: (@Sendable () -> Int)? = nil,
        start: @escaping @Sendable (_ index: Int, _ done: @escaping @Sendable (RequestOutcome) -> Void) -> Void
    ) async -> ClientResult {
        var result = ClientResult(client: client, workload: arguments.workload, api: api)
        result.rssBeforeKiB = ProcessLimits.residentSetKiB()
        return await CountWindow.measure(arguments: arguments, filling: result, lockAcquisitions: lockAcquisitions) {
            count, result in
            await run(count: count, threads: arguments.concurrency, filling: result, start: start)
        }
    }

    private static func run(
        count: Int, threads: Int, filling result: ClientResult,
        start: @escaping @Sendable (_ index: Int, _ done: @escaping @Sendable (RequestOutcome) -> Void) -> Void
    ) async -> ClientResult {
        var result = result
        result.requests = count
        let indices = IndexDispenser(count: count)
        let threads = min(threads, count)
        let (client, workload, api) = (result.client, result.workload, result.api)
        let clock = ContinuousClock()
        let began = clock.now
        let tally = await withCheckedContinuation { (finished: CheckedContinuation<ClientResult, Never>) in
            let run = BlockingRun(threads: threads, tally: result, finished: finished)
            for _ in 0..<threads {
                let thread = Thread {
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
                }
                thread.start()
            }
        }
        result = tally
        result.requests = count
        let (seconds, attoseconds) = (clock.now - began).components
        result.elapsedSeconds = Double(seconds) + Double(attoseconds) / 1e18
        return result
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
