// `--feature NAME` (Benchmarks --features): one storage or logging feature of
// the session turned on, the rest of the session as without it, and the check
// after the run that the feature really did its work.
//
//   cookies  a jar of the session's own, in memory (never the user's
//            cookies.json); nginx's /cookies/ location sets a cookie on every
//            response, so each response stores it again and each request after
//            the first sends it.
//   cache    a ResponseCache in memory and on disk, in a fresh temporary folder
//            removed at the end; nginx's /cached/ location answers cacheable
//            responses (ETag, Last-Modified, max-age=3600), and the request
//            keeps `.reloadIgnoringLocalCacheData`, so every request goes to
//            nginx and every response is offered to the cache for storing.
//            (A client killed by its watchdog leaves the folder behind.)
//   logging  a Logger at trace level (the most verbose the per-task log uses)
//            whose handler counts the messages and drops them: no I/O, the
//            cost is the library making its messages.
//   tracing  the session's own tracer (swift-distributed-tracing's
//            InMemoryTracer, which keeps every finished span): a span per
//            task (internal) and a client span per request it sent.
//   metrics  the session's own metrics factory (swift-metrics' TestMetrics,
//            which keeps every value): OpenTelemetry's HTTP client metrics.
//   middleware  one RequestMiddleware that passes requests and responses
//            through unchanged and counts them.
//   retry    RetryPolicy.standard, against nginx that never fails: the cost
//            of being ready to retry (the budget's ledger per request).
//   har      a HARRecorder writing every hop to a temporary file (bodies up
//            to its 1 MiB default), removed at the end.
import AsyncURLSession
import BenchClientSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import InMemoryTracing
import Logging
import MetricsTestKit
import Synchronization

public final class SessionFeature: Sendable {
    public let feature: ClientArguments.Feature
    private let cookieJar: CookieJar?
    private let cache: ResponseCache?
    /// The cache's temporary folder (removed by `removeFiles()`).
    private let cacheFolder: URL?
    private let logCounter: LogCounter?
    private let tracer: InMemoryTracer?
    private let metrics: TestMetrics?
    private let counter: PassThrough?
    private let recorder: HARRecorder?
    private let harFile: URL?

    /// Makes what the feature needs; for `cache`, a fresh 0700 folder in the
    /// temporary directory.
    public init(_ feature: ClientArguments.Feature) throws {
        self.feature = feature
        tracer = feature == .tracing ? InMemoryTracer() : nil
        metrics = feature == .metrics ? TestMetrics() : nil
        counter = feature == .middleware ? PassThrough() : nil
        if feature == .har {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(getpid())-\(UUID().uuidString).har")
            harFile = file
            recorder = try HARRecorder(fileURL: file)
        } else {
            harFile = nil
            recorder = nil
        }
        switch feature {
        case .cookies:
            cookieJar = CookieJar()
            cache = nil
            cacheFolder = nil
            logCounter = nil
        case .cache:
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("bench-cache-\(getpid())-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            cookieJar = nil
            cacheFolder = folder
            cache = Self.cache(in: folder)
            logCounter = nil
        case .logging:
            cookieJar = nil
            cache = nil
            cacheFolder = nil
            logCounter = LogCounter()
        case .tracing, .metrics, .middleware, .retry, .har:
            cookieJar = nil
            cache = nil
            cacheFolder = nil
            logCounter = nil
        }
    }

    /// The capacities of `ResponseCache.shared` (4 MiB in memory, 20 MiB on disk).
    private static func cache(in folder: URL) -> ResponseCache {
        ResponseCache(memoryCapacity: 4 << 20, diskCapacity: 20 << 20, directory: folder)
    }

    /// Turns the feature on in `configuration`.
    public func configure(_ configuration: inout SessionConfiguration) {
        switch feature {
        case .cookies:
            configuration.cookieJar = cookieJar
            configuration.httpShouldSetCookies = true
        case .cache:
            configuration.responseCache = cache
        case .logging:
            guard let logCounter else { return }
            var logger = Logger(label: "bench.asyncurlsession") { _ in CountingLogHandler(counter: logCounter) }
            logger.logLevel = .trace
            configuration.logger = logger
        case .tracing:
            configuration.tracer = tracer
        case .metrics:
            configuration.metricsFactory = metrics
        case .middleware:
            if let counter { configuration.middleware = [counter] }
        case .retry:
            configuration.retryPolicy = .standard
        case .har:
            configuration.harRecorder = recorder
        }
    }

    /// After the run: nil when the feature did its work, else what is wrong.
    public func problem(for request: URLRequest) -> String? {
        guard let url = request.url else { return "the request has no URL" }
        switch feature {
        case .cookies:
            guard let cookieJar else { return "no cookie jar" }
            if cookieJar.cookies(for: url).contains(where: { $0.name == "bench" && $0.value == "1" }) { return nil }
            return "the jar holds no cookie bench=1 for \(url.absoluteString) (\(cookieJar.cookies.count) cookies in all):"
                + " nginx's Set-Cookie was not stored"
        case .cache:
            guard let cache, let cacheFolder else { return "no response cache" }
            cache.flush()
            if let problem = cache.fileProblem { return "the cache's disk half failed: \(problem)" }
            guard cache.cachedResponse(for: request) != nil else {
                return "the cache holds no response for \(url.absoluteString): nothing was stored"
            }
            // A cache of its own on the same folder finds it on disk too.
            guard Self.cache(in: cacheFolder).cachedResponse(for: request) != nil else {
                return "the response is in the cache's memory but not in \(cacheFolder.path)"
            }
            return nil
        case .logging:
            let messages = logCounter?.count ?? 0
            return messages > 0 ? nil : "the logger's handler counted no message"
        case .tracing:
            let spans = tracer?.finishedSpans ?? []
            guard !spans.isEmpty else { return "the tracer finished no span" }
            // A task's span is the operation (internal); each request it
            // sent is a client span beneath it.
            guard spans.contains(where: { $0.kind == .internal }) else { return "no task span (internal) was finished" }
            return spans.contains(where: { $0.kind == .client }) ? nil : "no client span (one per request sent) was finished"
        case .metrics:
            guard let metrics else { return "no metrics factory" }
            // http.client.request.duration: a timer per request sent.
            return metrics.timers.isEmpty ? "the metrics factory made no timer (http.client.request.duration)" : nil
        case .middleware:
            let (prepared, inspected) = counter?.counts ?? (0, 0)
            guard prepared > 0, prepared == inspected else {
                return "the middleware prepared \(prepared) requests and inspected \(inspected) responses"
            }
            return nil
        case .retry:
            // Nothing to retry against a healthy server; the run's own
            // checks (every response 200, every body whole) hold.
            return nil
        case .har:
            guard let recorder else { return "no HAR recorder" }
            return recorder.entryCount > 0 ? nil : "the HAR recorder wrote no entry"
        }
    }

    /// Log messages counted (logging only).
    public var logMessages: Int? { logCounter?.count }

    /// Removes the cache's temporary folder and the HAR file, if any.
    public func removeFiles() {
        if let harFile {
            recorder?.close()
            try? FileManager.default.removeItem(at: harFile)
        }
        guard let cacheFolder else { return }
        try? FileManager.default.removeItem(at: cacheFolder)
    }
}

/// Counts log messages, from any thread.
final class LogCounter: Sendable {
    private let messages = Atomic<Int>(0)

    func add() { messages.add(1, ordering: .relaxed) }

    var count: Int { messages.load(ordering: .relaxed) }
}

/// A handler that counts every message it is given and drops it.
struct CountingLogHandler: LogHandler {
    let counter: LogCounter
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        counter.add()
    }
}

/// A middleware that changes nothing and counts what it saw.
final class PassThrough: RequestMiddleware, Sendable {
    private let prepared = Atomic<Int>(0)
    private let inspected = Atomic<Int>(0)

    func prepare(_ request: URLRequest, attempt: MiddlewareAttempt) async throws -> MiddlewareRequestStep {
        prepared.add(1, ordering: .relaxed)
        return .send(request)
    }

    func inspect(_ response: HTTPURLResponse, request: URLRequest, attempt: MiddlewareAttempt) async throws
        -> MiddlewareResponseStep
    {
        inspected.add(1, ordering: .relaxed)
        return .accept
    }

    var counts: (prepared: Int, inspected: Int) {
        (prepared.load(ordering: .relaxed), inspected.load(ordering: .relaxed))
    }
}
