// Runs `count` requests keeping at most `concurrency` in flight (a TaskGroup
// refilled as requests finish) and tallies the outcomes.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

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

    /// The outcome of a call that returns a whole body and its response
    /// (`data(for:)` of FoundationNetworking's URLSession or of our classic
    /// one): a success when the status is the one expected.
    public static func collected(
        expectedStatus: Int, bytesSent: Int, _ call: () async throws -> (Data, URLResponse)
    ) async -> RequestOutcome {
        do {
            let (data, response) = try await call()
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == expectedStatus else { return .unexpectedStatus(status) }
            return RequestOutcome(bytesReceived: data.count, bytesSent: bytesSent)
        } catch {
            return .failure(error)
        }
    }
}

public enum BoundedConcurrency {
    /// One client run: the result line for `client` and `api`, the RSS before
    /// any request, then `arguments.count` requests, `arguments.concurrency`
    /// at a time. With `--count-warmup W`, W requests first, then the
    /// measured ones counted (`CountWindow`; `lockAcquisitions` reads the
    /// count build's tally of our locks, nil where there is none).
    public static func measure(
        client: String, api: String, arguments: ClientArguments,
        lockAcquisitions: (@Sendable () -> Int)? = nil,
        request: @escaping @Sendable (Int) async -> RequestOutcome
    ) async -> ClientResult {
        var result = ClientResult(client: client, workload: arguments.workload, api: api)
        result.rssBeforeKiB = ProcessLimits.residentSetKiB()
        if arguments.arrivalRate > 0 {
            result.api += ", open loop"
            return await OpenLoop.run(arguments: arguments, filling: result, request: request)
        }
        return await CountWindow.measure(arguments: arguments, filling: result, lockAcquisitions: lockAcquisitions) {
            count, result in
            await run(count: count, concurrency: arguments.concurrency, filling: result, request: request)
        }
    }

    /// Runs `request(i)` for i in 0..<count, `concurrency` at a time, and
    /// returns `result` with the counts and the elapsed time filled in.
    ///
    /// Shape: `concurrency` worker tasks, each taking the next index and
    /// running requests one after another, the way a service's workers or a
    /// connection-bound loop do. (A child task per request would add a task
    /// creation and a wake-up of the parent per request, the same for every
    /// Swift client, which raw libcurl's loop does not pay.)
    public static func run(
        count: Int,
        concurrency: Int,
        filling result: ClientResult,
        request: @escaping @Sendable (Int) async -> RequestOutcome
    ) async -> ClientResult {
        let clock = ContinuousClock()
        let start = clock.now
        let indices = IndexDispenser(count: count)
        var tally = result
        tally.requests = count
        await withTaskGroup(of: ClientResult.self) { group in
            for _ in 0..<min(concurrency, count) {
                group.addTask {
                    var partial = ClientResult(client: result.client, workload: result.workload, api: result.api)
                    while let index = indices.next() {
                        partial.record(await request(index))
                    }
                    return partial
                }
            }
            for await partial in group {
                tally.merge(partial)
            }
        }
        let elapsed = clock.now - start
        let (seconds, attoseconds) = elapsed.components
        tally.elapsedSeconds = Double(seconds) + Double(attoseconds) / 1e18
        return tally
    }
}

/// Hands out 0..<count once each, to any number of workers.
final class IndexDispenser: Sendable {
    private let count: Int
    private let taken = Atomic<Int>(0)

    init(count: Int) {
        self.count = count
    }

    func next() -> Int? {
        let index = taken.add(1, ordering: .relaxed).oldValue
        return index < count ? index : nil
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

    /// Adds a worker's counts to these.
    public mutating func merge(_ partial: ClientResult) {
        bytesReceived += partial.bytesReceived
        bytesSent += partial.bytesSent
        errors += partial.errors
        ok += partial.ok
        if firstError == nil { firstError = partial.firstError }
        if let version = partial.httpVersion { httpVersion = version }
    }
}
