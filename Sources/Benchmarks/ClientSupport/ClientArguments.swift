// The command line every benchmark client takes (bench-rawcurl parses the same
// flags in C):
//
//   --workload W1 --url URL --count N --concurrency C
//   [--post-bytes B] [--cacert FILE] [--stream] [--consume-rate BYTES_PER_SEC]
//   [--timeout SECONDS] [--io-executor] [--download] [--background]
//   [--feature cookies|cache|logging|tracing|metrics] [--classic-style blocking|async]
//   [--count-warmup W] [--rate R [--rate-warmup W]]
//
// --io-executor, --download and --background are for bench-asyncurlsession-*
// only, --feature for bench-asyncurlsession-data only, --classic-style for
// bench-urlsessioncompat only: the harness passes them to no other client
// (ClientTable).
//
// Parsed by hand: the clients stay small and start fast.
import Foundation

public struct ClientArguments: Sendable {
    /// Workload name, for the result line only (W1 ... W7).
    public var workload = ""
    public var url: URL
    /// Number of requests to make.
    public var count = 1
    /// Requests in flight at once (and connections allowed per host).
    public var concurrency = 1
    /// When > 0: each request is a POST with a body of this many zero bytes.
    public var postBytes = 0
    /// PEM file with the CA that signed the HTTPS server's certificate.
    public var caCertificatePath: String?
    /// Consume bodies chunk by chunk and discard them instead of collecting them.
    public var stream = false
    /// AsyncURLSession only: run the requests on `Session.ioExecutor`.
    public var ioExecutor = false
    /// AsyncURLSession events client only: `session.downloadTask(with:)`,
    /// the body to a file whose size is counted (W8).
    public var download = false
    /// AsyncURLSession events client only: the download in a background
    /// session, run by a transfer agent of its own (implies `download`).
    public var background = false
    /// AsyncURLSession data client only: the one session feature turned on
    /// (`Benchmarks --features`); nil for none.
    public var feature: Feature?
    /// Classic client only: how legacy code waits for each request (nil:
    /// chains started from the completion handlers).
    public var classicStyle: ClassicStyle?
    /// When > 0: read bodies no faster than this (slow consumer, W6).
    public var consumeBytesPerSecond: Double = 0
    /// The client gives up (and reports failure) after this many seconds.
    public var timeoutSeconds: Double = 300
    /// When > 0 (`Benchmarks --count`): first this many requests, not
    /// reported, then the `count` measured ones counted (`CountWindow`):
    /// allocations, lock acquisitions, context switches, CPU.
    public var countWarmup = 0
    /// When > 0 (W9): an open loop, requests sent at this many per second
    /// whatever the answers do, latency measured from each one's intended
    /// send time (`OpenLoop`); `concurrency` caps those in flight.
    public var arrivalRate: Double = 0
    /// Open loop: requests before the timed schedule, in a closed loop at
    /// `concurrency`, not measured (connections opened, caches warm).
    public var rateWarmup = 0

    /// A session feature `--feature` turns on (the rest of the session as
    /// without it). The harness sends each to an nginx location of its own.
    public enum Feature: String, CaseIterable, Sendable {
        /// Responses carry Set-Cookie; a jar in memory stores it, requests send it.
        case cookies
        /// Responses are cacheable; a cache in memory and on disk (a
        /// temporary folder) is offered every one, requests still reload.
        case cache
        /// A logger at trace level whose handler counts messages and drops them.
        case logging
        /// A tracer of the session's own (InMemoryTracer): a span per task.
        case tracing
        /// A metrics factory of the session's own (MetricsTestKit's).
        case metrics
        /// One middleware that passes every request and response through.
        case middleware
        /// `RetryPolicy.standard` on a healthy server: nothing to retry.
        case retry
        /// A HAR recorder writing every hop to a temporary file.
        case har
    }

    /// How a legacy program waits for a classic request, besides chaining
    /// the next request from the completion handler.
    public enum ClassicStyle: String, CaseIterable, Sendable {
        /// A thread per chain blocks on a semaphore the completion handler
        /// signals: command-line tools and scripts.
        case blocking
        /// `try await session.data(for:)` on the classic session: code
        /// moved to async/await that kept its `URLSession`.
        case async
    }

    public var isPost: Bool { postBytes > 0 }

    /// The status every response must have: 204 from the POST sink, else 200.
    public var expectedStatus: Int { isPost ? 204 : 200 }

    /// Parses `CommandLine.arguments`; on a bad command line prints a message
    /// to stderr and exits with status 64 (EX_USAGE).
    public static func parseOrExit(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> ClientArguments {
        do {
            return try parse(arguments)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(64)
        }
    }

    public struct UsageError: Error, CustomStringConvertible {
        public let description: String
    }

    public static func parse(_ arguments: [String]) throws -> ClientArguments {
        var values: [String: String] = [:]
        var flags: Set<String> = []
        var index = 0
        while index < arguments.count {
            let name = arguments[index]
            switch name {
            case "--stream", "--io-executor", "--download", "--background":
                flags.insert(name)
                index += 1
            case "--workload", "--url", "--count", "--concurrency", "--post-bytes", "--cacert",
                 "--consume-rate", "--timeout", "--feature", "--classic-style", "--count-warmup",
                 "--rate", "--rate-warmup":
                guard index + 1 < arguments.count else {
                    throw UsageError(description: "\(name) needs a value")
                }
                values[name] = arguments[index + 1]
                index += 2
            default:
                throw UsageError(description: "unknown argument \(name)")
            }
        }
        guard let urlString = values["--url"], let url = URL(string: urlString) else {
            throw UsageError(description: "--url URL is required")
        }
        var result = ClientArguments(url: url)
        result.workload = values["--workload"] ?? ""
        result.count = try integer(values["--count"], name: "--count", default: 1, minimum: 1)
        result.concurrency = try integer(values["--concurrency"], name: "--concurrency", default: 1, minimum: 1)
        result.postBytes = try integer(values["--post-bytes"], name: "--post-bytes", default: 0, minimum: 0)
        result.caCertificatePath = values["--cacert"]
        result.countWarmup = try integer(values["--count-warmup"], name: "--count-warmup", default: 0, minimum: 0)
        result.stream = flags.contains("--stream")
        result.ioExecutor = flags.contains("--io-executor")
        result.background = flags.contains("--background")
        result.download = result.background || flags.contains("--download")
        if let name = values["--feature"] {
            guard let feature = Feature(rawValue: name) else {
                let known = Feature.allCases.map(\.rawValue).joined(separator: ", ")
                throw UsageError(description: "--feature needs one of \(known), got \(name)")
            }
            result.feature = feature
        }
        if let name = values["--classic-style"] {
            guard let style = ClassicStyle(rawValue: name) else {
                let known = ClassicStyle.allCases.map(\.rawValue).joined(separator: ", ")
                throw UsageError(description: "--classic-style needs one of \(known), got \(name)")
            }
            result.classicStyle = style
        }
        result.consumeBytesPerSecond = try number(values["--consume-rate"], name: "--consume-rate", default: 0)
        result.timeoutSeconds = try number(values["--timeout"], name: "--timeout", default: 300)
        result.arrivalRate = try number(values["--rate"], name: "--rate", default: 0)
        result.rateWarmup = try integer(values["--rate-warmup"], name: "--rate-warmup", default: 0, minimum: 0)
        return result
    }

    private static func integer(_ text: String?, name: String, default value: Int, minimum: Int) throws -> Int {
        guard let text else { return value }
        guard let parsed = Int(text), parsed >= minimum else {
            throw UsageError(description: "\(name) needs an integer >= \(minimum), got \(text)")
        }
        return parsed
    }

    private static func number(_ text: String?, name: String, default value: Double) throws -> Double {
        guard let text else { return value }
        guard let parsed = Double(text), parsed >= 0 else {
            throw UsageError(description: "\(name) needs a number >= 0, got \(text)")
        }
        return parsed
    }
}
