// W9, the open loop: requests sent at a fixed arrival rate whatever the
// answers do, each one's latency measured from the time it was meant to be
// sent (start + i / rate), so that a stall of the client delays every
// request due meanwhile and shows in the tail (no coordinated omission).
// bench-rawcurl's open_loop.c is the same in C.
//
// Shape: `concurrency` workers, each taking the next request index, sleeping
// until its intended time unless that has passed, then sending it. At most
// `concurrency` requests are in flight (a slow client cannot exhaust
// descriptors); a request due while every worker is busy is taken late, and
// its wait counts in its latency.
//
// Why not `Pacer`: it paces the bytes a slow consumer reads (W6), by
// sleeping after each chunk; this paces when requests start. What the two
// share is a sleep until an instant on the continuous clock.
import Foundation

/// The measured requests' latencies: nearest-rank percentiles, milliseconds.
public struct LatencySummary: Codable, Sendable {
    public var p50Ms = 0.0
    public var p99Ms = 0.0
    public var p999Ms = 0.0
    public var maxMs = 0.0
    public var meanMs = 0.0
    /// The arrival rate asked for, requests per second.
    public var rate = 0.0
    /// Latencies summarised (the measured requests that finished).
    public var samples = 0

    public init() {}

    enum CodingKeys: String, CodingKey {
        case rate, samples
        case p50Ms = "p50_ms"
        case p99Ms = "p99_ms"
        case p999Ms = "p999_ms"
        case maxMs = "max_ms"
        case meanMs = "mean_ms"
    }

    /// `seconds`: one latency per request, any order.
    public init(seconds: [Double], rate: Double) {
        let sorted = seconds.sorted()
        self.rate = rate
        samples = sorted.count
        guard let last = sorted.last else { return }
        func percentile(_ p: Double) -> Double {
            let rank = min(sorted.count, max(1, Int((Double(sorted.count) * p).rounded(.up))))
            return sorted[rank - 1] * 1e3
        }
        p50Ms = percentile(0.50)
        p99Ms = percentile(0.99)
        p999Ms = percentile(0.999)
        maxMs = last * 1e3
        meanMs = sorted.reduce(0, +) / Double(sorted.count) * 1e3
    }
}

public enum OpenLoop {
    /// The warm-up (closed, `rateWarmup` requests), then `count` requests at
    /// `arrivalRate` per second with at most `concurrency` in flight;
    /// `result` comes back with the counts, the elapsed time (from the
    /// first intended send to the last answer) and the latencies.
    public static func run(
        arguments: ClientArguments, filling result: ClientResult,
        request: @escaping @Sendable (Int) async -> RequestOutcome
    ) async -> ClientResult {
        var result = result
        if arguments.rateWarmup > 0 {
            let warm = await BoundedConcurrency.run(
                count: arguments.rateWarmup, concurrency: arguments.concurrency,
                filling: ClientResult(client: result.client, workload: result.workload, api: result.api),
                request: request)
            // Its errors stay (they fail the run); its successes and bytes go.
            result.errors += warm.errors
            if result.firstError == nil { result.firstError = warm.firstError }
        }
        let count = arguments.count
        let interval = 1.0 / arguments.arrivalRate
        let indices = IndexDispenser(count: count)
        let (client, workload, api) = (result.client, result.workload, result.api)
        let clock = ContinuousClock()
        let start = clock.now
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        await withTaskGroup(of: (ClientResult, [Double]).self) { group in
            for _ in 0..<min(arguments.concurrency, count) {
                group.addTask {
                    var partial = ClientResult(client: client, workload: workload, api: api)
                    var mine: [Double] = []
                    while let index = indices.next() {
                        let intended = start + .seconds(Double(index) * interval)
                        if intended > clock.now {
                            // Zero tolerance: the sleep is part of what is
                            // measured, so it may not be coalesced late.
                            try? await Task.sleep(until: intended, tolerance: .zero, clock: clock)
                        }
                        partial.record(await request(index))
                        mine.append((clock.now - intended).openLoopSeconds)
                    }
                    return (partial, mine)
                }
            }
            for await (partial, mine) in group {
                result.merge(partial)
                latencies += mine
            }
        }
        result.elapsedSeconds = (clock.now - start).openLoopSeconds
        result.requests = count
        result.latency = LatencySummary(seconds: latencies, rate: arguments.arrivalRate)
        return result
    }
}

extension Duration {
    fileprivate var openLoopSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
