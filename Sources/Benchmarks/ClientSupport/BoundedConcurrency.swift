// Runs `count` requests keeping at most `concurrency` in flight (a TaskGroup
// refilled as requests finish) and tallies the outcomes.
import Foundation

/// What one request produced.
public struct RequestOutcome: Sendable {
    public var bytesReceived: Int
    public var bytesSent: Int
    public var error: String?
    public var httpVersion: String?

    public init(bytesReceived: Int = 0, bytesSent: Int = 0, error: String? = nil, httpVersion: String? = nil) {
        self.bytesReceived = bytesReceived
        self.bytesSent = bytesSent
        self.error = error
        self.httpVersion = httpVersion
    }

    public static func failure(_ error: any Error) -> RequestOutcome {
        RequestOutcome(error: String(describing: error))
    }

    /// A failure for a status code other than the one expected.
    public static func unexpectedStatus(_ status: Int) -> RequestOutcome {
        RequestOutcome(error: "unexpected HTTP status \(status)")
    }
}

public enum BoundedConcurrency {
    /// One client run: the result line for `client` and `api`, the RSS before
    /// any request, then `arguments.count` requests, `arguments.concurrency`
    /// at a time.
    public static func measure(
        client: String, api: String, arguments: ClientArguments,
        request: @escaping @Sendable (Int) async -> RequestOutcome
    ) async -> ClientResult {
        var result = ClientResult(client: client, workload: arguments.workload, api: api)
        result.rssBeforeKiB = ProcessLimits.residentSetKiB()
        return await run(count: arguments.count, concurrency: arguments.concurrency, filling: result, request: request)
    }

    /// Runs `request(i)` for i in 0..<count, `concurrency` at a time, and
    /// returns `result` with the counts and the elapsed time filled in.
    public static func run(
        count: Int,
        concurrency: Int,
        filling result: ClientResult,
        request: @escaping @Sendable (Int) async -> RequestOutcome
    ) async -> ClientResult {
        let clock = ContinuousClock()
        let start = clock.now
        var tally = result
        tally.requests = count
        await withTaskGroup(of: RequestOutcome.self) { group in
            var started = 0
            while started < min(concurrency, count) {
                let index = started
                group.addTask { await request(index) }
                started += 1
            }
            while let outcome = await group.next() {
                tally.record(outcome)
                if started < count {
                    let index = started
                    group.addTask { await request(index) }
                    started += 1
                }
            }
        }
        let elapsed = clock.now - start
        let (seconds, attoseconds) = elapsed.components
        tally.elapsedSeconds = Double(seconds) + Double(attoseconds) / 1e18
        return tally
    }
}

extension ClientResult {
    /// Adds one request's outcome to the counts.
    public mutating func record(_ outcome: RequestOutcome) {
        bytesReceived += outcome.bytesReceived
        bytesSent += outcome.bytesSent
        if let error = outcome.error {
            errors += 1
            if firstError == nil { firstError = error }
        } else {
            ok += 1
        }
        if let version = outcome.httpVersion { httpVersion = version }
    }
}
