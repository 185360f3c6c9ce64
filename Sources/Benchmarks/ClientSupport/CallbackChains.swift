// Runs `count` requests through a completion-handler API the way legacy code
// chains them: `concurrency` chains, each starting its next request from the
// previous one's completion handler. No Swift task waits per request, so the
// run measures the callback API itself, not a bridge into async/await (which
// would add a hop to a Swift worker thread per request).
import Foundation
import Synchronization

public enum CallbackChains {
    /// How each chain waits for its request's completion handler.
    public enum Style: Sendable {
        /// The next request starts from the handler itself.
        case fromHandlers
        /// Each chain is a thread blocked on a semaphore the handler
        /// signals (`BlockingChains`): command-line tools and scripts.
        case blockingThreads
    }

    /// `start(i, done)` starts request i and calls `done` once, from any
    /// thread, with its outcome. Returns `result` with the counts and the
    /// elapsed time filled in, once every request has reported.
    /// With `--count-warmup W`, W requests first, then the measured ones
    /// counted (`CountWindow`, as `BoundedConcurrency.measure`).
    public static func measure(
        client: String, api: String, arguments: ClientArguments,
        lockAcquisitions: (@Sendable () -> Int)? = nil, style: Style = .fromHandlers,
        start: @escaping @Sendable (_ index: Int, _ done: @escaping @Sendable (RequestOutcome) -> Void) -> Void
    ) async -> ClientResult {
        var result = ClientResult(client: client, workload: arguments.workload, api: api)
        result.rssBeforeKiB = ProcessLimits.residentSetKiB()
        return await CountWindow.measure(arguments: arguments, filling: result, lockAcquisitions: lockAcquisitions) {
            count, result in
            await run(count: count, chains: arguments.concurrency, style: style, filling: result, start: start)
        }
    }

    private static func run(
        count: Int, chains: Int, style: Style, filling result: ClientResult,
        start: @escaping @Sendable (_ index: Int, _ done: @escaping @Sendable (RequestOutcome) -> Void) -> Void
    ) async -> ClientResult {
        var result = result
        let clock = ContinuousClock()
        let began = clock.now
        let tally = await withCheckedContinuation { (finished: CheckedContinuation<ClientResult, Never>) in
            switch style {
            case .fromHandlers:
                let run = ChainRun(count: count, tally: result, start: start, finished: finished)
                run.begin(chains: min(chains, count))
            case .blockingThreads:
                BlockingChains.start(count: count, threads: min(chains, count), tally: result, finished: finished, start: start)
            }
        }
        result = tally
        result.requests = count
        let (seconds, attoseconds) = (clock.now - began).components
        result.elapsedSeconds = Double(seconds) + Double(attoseconds) / 1e18
        return result
    }
}

/// The shared state of one run's chains.
private final class ChainRun: Sendable {
    private let count: Int
    private let indices: IndexDispenser
    private let start: @Sendable (Int, @escaping @Sendable (RequestOutcome) -> Void) -> Void
    private let state: Mutex<(tally: ClientResult, reported: Int, finished: CheckedContinuation<ClientResult, Never>?)>

    init(
        count: Int, tally: ClientResult,
        start: @escaping @Sendable (Int, @escaping @Sendable (RequestOutcome) -> Void) -> Void,
        finished: CheckedContinuation<ClientResult, Never>
    ) {
        self.count = count
        self.indices = IndexDispenser(count: count)
        self.start = start
        self.state = Mutex((tally, 0, finished))
    }

    func begin(chains: Int) {
        if count == 0 { return report(nil) }
        for _ in 0..<chains { next() }
    }

    /// Starts the next request of a chain, if any is left.
    private func next() {
        guard let index = indices.next() else { return }
        start(index) { [self] outcome in
            report(outcome)
            next()
        }
    }

    private func report(_ outcome: RequestOutcome?) {
        let done = state.withLock { state -> (CheckedContinuation<ClientResult, Never>, ClientResult)? in
            if let outcome {
                state.tally.record(outcome)
                state.reported += 1
            }
            guard state.reported == count, let finished = state.finished else { return nil }
            state.finished = nil
            return (finished, state.tally)
        }
        if let (finished, tally) = done { finished.resume(returning: tally) }
    }
}
