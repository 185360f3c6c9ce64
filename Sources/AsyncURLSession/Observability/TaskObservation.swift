internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Instrumentation
import Metrics
import ServiceContextModule
import Synchronization
import Tracing

/// One task's span and metrics (issue 47): made when the task is made,
/// only when a tracer, an instrument or a metrics factory is in use (the
/// configuration's, else the bootstrapped one); a task without any holds
/// nil, and each hook is one nil check, as for `TaskLog`.
///
/// The task's span is an OpenTelemetry HTTP client span (stable semantic
/// conventions); each attempt on the wire (a redirect hop, an
/// authentication retry, a cache hit) is an `http.attempt` event on it,
/// and libcurl's timings of each attempt are timed events (`dns`,
/// `connect`, `tls`, `first_byte`). Trace headers go into every hop's
/// request through the instrument, to the task's origin only unless the
/// configuration's `propagatesTraceContextAcrossOrigins` says otherwise.
final class TaskObservation: Sendable {
    /// Starts the task's span when it is resumed; nil when only metrics
    /// (or only an instrument) are on.
    private let tracer: (any Tracer)?
    /// Injects trace headers: the configuration's tracer, else the
    /// bootstrapped instrument; nil when neither is in use.
    private let instrument: (any Instrument)?
    /// The task's creator's context (task-local), the span's parent.
    private let parent: ServiceContext
    private let metrics: MetricsRecorder?
    private let request: URLRequest
    private let acrossOrigins: Bool
    private let state = Mutex(State())

    private struct State {
        /// Made by `started()`, ended by `ended(...)`.
        var span: (any Span)?
        var startedAt: ContinuousClock.Instant?
        /// Attempts on the wire (hops launched), cache hits included.
        var attempts = 0
        var currentURL: String?
        var currentMethod: String?
        var via: String?
        var status: Int?
        var protocolVersion: String?
        var cacheHit = false
        var ended = false
    }

    // MARK: Made (or not)

    /// The per-task check of issue 47: nil, and nothing else made, when no
    /// tracer, instrument or metrics factory is in use. Two reads (the
    /// instrument, the metrics factory) and two type checks.
    static func make(configuration: SessionConfiguration, request: URLRequest) -> TaskObservation? {
        let tracer: (any Tracer)?
        let instrument: (any Instrument)?
        if let configured = configuration.tracer {
            (tracer, instrument) = (configured, configured)
        } else {
            let global = InstrumentationSystem.instrument
            if global is NoOpInstrument || global is NoOpTracer {
                (tracer, instrument) = (nil, nil)
            } else {
                let found = InstrumentationSystem.tracer
                (tracer, instrument) = (found is NoOpTracer ? nil : found, global)
            }
        }
        let factory = metricsFactory(for: configuration)
        guard instrument != nil || factory != nil else { return nil }
        return TaskObservation(
            configuration: configuration, request: request, tracer: tracer, instrument: instrument, factory: factory)
    }

    private init(
        configuration: SessionConfiguration, request: URLRequest, tracer: (any Tracer)?,
        instrument: (any Instrument)?, factory: (any MetricsFactory)?
    ) {
        self.request = request
        self.tracer = tracer
        self.instrument = instrument
        acrossOrigins = configuration.propagatesTraceContextAcrossOrigins
        parent = ServiceContext.current ?? .topLevel
        let method = request.httpMethod ?? "GET"
        let url = request.url
        metrics = factory.map {
            MetricsRecorder(
                factory: $0, prefix: configuration.metricsPrefix,
                method: Self.knownMethods.contains(method) ? method : "_OTHER",
                scheme: url?.scheme?.lowercased() ?? "", host: configuration.metricsIncludeHost ? url?.host : nil)
        }
    }

    /// The configuration's tracer, else the bound or bootstrapped one
    /// unless that is swift-distributed-tracing's no-op; nil when none is in use.
    static func tracer(for configuration: SessionConfiguration) -> (any Tracer)? {
        if let configured = configuration.tracer { return configured }
        let global = InstrumentationSystem.instrument
        if global is NoOpInstrument || global is NoOpTracer { return nil }
        let found = InstrumentationSystem.tracer
        return found is NoOpTracer ? nil : found
    }

    /// The configuration's metrics factory, else the bound or bootstrapped
    /// one unless that is swift-metrics' no-op; nil when none is in use.
    static func metricsFactory(for configuration: SessionConfiguration) -> (any MetricsFactory)? {
        if let configured = configuration.metricsFactory { return configured }
        let global = MetricsSystem.factory
        return global is NOOPMetricsHandler ? nil : global
    }

    static let knownMethods: Set<String> = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "QUERY",
    ]

    static func port(of url: URL) -> Int? {
        if let port = url.port { return port }
        switch url.scheme?.lowercased() {
        case "https", "wss": return 443
        case "http", "ws": return 80
        default: return nil
        }
    }

    /// Whether hops' timings are wanted (the engine then reads them from
    /// libcurl even when no one else can see the task's metrics).
    var tracesHops: Bool { tracer != nil }

    // MARK: Hooks (beside the task log's)

    /// The task was resumed (`log?.started`): its span starts.
    func started() {
        metrics?.started()
        let span = tracer.map { tracer in
            let method = request.httpMethod ?? "GET"
            let known = Self.knownMethods.contains(method)
            let url = request.url
            let span = tracer.startSpan(known ? method : "HTTP", context: parent, ofKind: .client)
            span.updateAttributes { attributes in
                attributes["http.request.method"] = SpanAttribute.string(known ? method : "_OTHER")
                if !known { attributes["http.request.method_original"] = SpanAttribute.string(method) }
                if let host = url?.host { attributes["server.address"] = SpanAttribute.string(host) }
                if let port = url.flatMap(Self.port(of:)) { attributes["server.port"] = SpanAttribute.int64(Int64(port)) }
                if let url { attributes["url.full"] = SpanAttribute.string(TaskLog.traceURL(url)) }
                if let scheme = url?.scheme?.lowercased() { attributes["url.scheme"] = SpanAttribute.string(scheme) }
            }
            return span
        }
        state.withLock { state in
            state.span = span
            state.startedAt = .now
        }
    }

    /// A hop goes out (`log?.hop`): counted, and the trace headers put on
    /// the request `request` (the one prepared for the wire), unless it goes
    /// to another origin than the task's and the configuration keeps them
    /// to the task's origin.
    func hop(_ request: inout URLRequest, via: String) {
        let url = tracer == nil ? nil : request.url.map(TaskLog.traceURL)
        let span = state.withLock { state -> (any Span)? in
            state.attempts += 1
            state.currentURL = url
            state.currentMethod = request.httpMethod ?? "GET"
            state.via = via
            state.status = nil
            return state.span
        }
        guard let instrument, via != "cache" else { return }
        guard acrossOrigins || RedirectPolicy.sameOrigin(self.request.url, request.url) else { return }
        instrument.inject(span?.context ?? parent, into: &request, using: URLRequestHeaderInjector())
    }

    /// The hop stopped in its TLS handshake for a decision (a server-trust
    /// or client-certificate challenge, or the handshake that names what is
    /// wrong with a certificate): nothing was sent, and the hop starts
    /// again, so it is not an attempt (as it is not a transaction in the
    /// task's metrics).
    func hopStoppedForTLS() {
        state.withLock { $0.attempts -= 1 }
    }

    /// The retry policy sends the request again: an `http.retry` event
    /// naming the attempt to come, its delay and why.
    func retrying(_ attempt: RetryAttempt) {
        guard let span = state.withLock({ $0.span }) else { return }
        var attributes: SpanAttributes = [:]
        attributes["http.request.resend_count"] = SpanAttribute.int64(Int64(attempt.attempt - 1))
        attributes["asyncurlsession.retry.delay"] = SpanAttribute.double(attempt.delay)
        switch attempt.reason {
        case .failure(let error):
            attributes["error.type"] = SpanAttribute.string(Self.name(of: error.code))
        case .status(let response):
            attributes["http.response.status_code"] = SpanAttribute.int64(Int64(response.statusCode))
        }
        span.addEvent(SpanEvent(name: "http.retry", attributes: attributes))
    }

    /// A response head arrived (`log?.response`).
    func response(status: Int, httpVersion: String) {
        state.withLock { state in
            state.status = status
            var version = Substring(httpVersion)
            if version.hasPrefix("HTTP/") { version = version.dropFirst(5) }
            if !version.isEmpty { state.protocolVersion = String(version) }
        }
    }

    /// A response came from the cache without the network.
    func cacheHit() {
        state.withLock { $0.cacheHit = true }
    }

    /// A hop's transfer ended: an `http.attempt` event, and libcurl's
    /// timings of it as timed events.
    func hopEnded(metrics hop: TransferMetrics?, error: URLError?) {
        let (span, attempt, url, method, via, status) = state.withLock {
            ($0.span, $0.attempts - 1, $0.currentURL, $0.currentMethod, $0.via, $0.status)
        }
        guard let span else { return }
        var attributes: SpanAttributes = [:]
        if let method { attributes["http.request.method"] = SpanAttribute.string(method) }
        if let url { attributes["url.full"] = SpanAttribute.string(url) }
        if attempt > 0 { attributes["http.request.resend_count"] = SpanAttribute.int64(Int64(attempt)) }
        if let status { attributes["http.response.status_code"] = SpanAttribute.int64(Int64(status)) }
        if let via { attributes["asyncurlsession.via"] = SpanAttribute.string(via) }
        if let error { attributes["error.type"] = SpanAttribute.string(Self.name(of: error.code)) }
        guard let hop, hop.total > 0 || hop.firstByte != nil else {
            span.addEvent(SpanEvent(name: "http.attempt", attributes: attributes))
            return
        }
        if let address = hop.remoteAddress { attributes["network.peer.address"] = SpanAttribute.string(address) }
        if let port = hop.remotePort { attributes["network.peer.port"] = SpanAttribute.int64(Int64(port)) }
        attributes["asyncurlsession.connection_reused"] = SpanAttribute.bool(hop.reusedConnection)
        let start = hop.fetchStart.timeIntervalSince1970
        func instant(_ offset: Double) -> DefaultTracerClock.Instant {
            DefaultTracerClock.Instant(nanosecondsSinceEpoch: UInt64(max(0, (start + offset) * 1e9)))
        }
        let timings: [(String, Double?)] = [
            ("dns", hop.domainLookup), ("connect", hop.connect), ("tls", hop.secureConnection),
            ("first_byte", hop.firstByte),
        ]
        for (name, offset) in timings {
            guard let offset, offset > 0 else { continue }
            attributes["asyncurlsession.timing.\(name)"] = SpanAttribute.double(offset)
            span.addEvent(SpanEvent(name: name, at: instant(offset)))
        }
        attributes["asyncurlsession.timing.total"] = SpanAttribute.double(hop.total)
        span.addEvent(SpanEvent(name: "http.attempt", at: instant(hop.total), attributes: attributes))
    }

    /// The task ended (`log?.ended`); a second call does nothing.
    func ended(error: URLError?, bytesSent: Int64, bytesReceived: Int64, redirects: Int) {
        let (span, startedAt, status, version, cacheHit, attempts, first) = state.withLock { state in
            defer {
                state.ended = true
                state.span = nil
            }
            return (
                state.span, state.startedAt, state.status, state.protocolVersion, state.cacheHit, state.attempts,
                !state.ended
            )
        }
        guard first, let startedAt else { return }
        let failed = status.map { $0 >= 400 } ?? false
        if let span {
            span.updateAttributes { attributes in
                if let status { attributes["http.response.status_code"] = SpanAttribute.int64(Int64(status)) }
                if attempts > 1 { attributes["http.request.resend_count"] = SpanAttribute.int64(Int64(attempts - 1)) }
                if let version {
                    attributes["network.protocol.name"] = "http"
                    attributes["network.protocol.version"] = SpanAttribute.string(version)
                }
                if let error {
                    attributes["error.type"] = SpanAttribute.string(Self.name(of: error.code))
                } else if failed, let status {
                    attributes["error.type"] = SpanAttribute.string(String(status))
                }
            }
            if let error {
                span.recordError(error)
                span.setStatus(SpanStatus(code: .error, message: Self.name(of: error.code)))
            } else if failed {
                span.setStatus(SpanStatus(code: .error))
            }
            span.end()
        }
        metrics?.finished(
            status: status, error: error, duration: startedAt.duration(to: .now), bytesSent: bytesSent,
            bytesReceived: bytesReceived, redirects: redirects, cacheHit: cacheHit)
    }

    /// A `URLError.Code`'s name (`timedOut`), for `error.type` and the
    /// errors metric; the raw value for a code without one here.
    static func name(of code: URLError.Code) -> String {
        switch code {
        case .cancelled: "cancelled"
        case .timedOut: "timedOut"
        case .badURL: "badURL"
        case .unsupportedURL: "unsupportedURL"
        case .cannotFindHost: "cannotFindHost"
        case .cannotConnectToHost: "cannotConnectToHost"
        case .networkConnectionLost: "networkConnectionLost"
        case .dnsLookupFailed: "dnsLookupFailed"
        case .httpTooManyRedirects: "httpTooManyRedirects"
        case .resourceUnavailable: "resourceUnavailable"
        case .notConnectedToInternet: "notConnectedToInternet"
        case .redirectToNonExistentLocation: "redirectToNonExistentLocation"
        case .badServerResponse: "badServerResponse"
        case .userCancelledAuthentication: "userCancelledAuthentication"
        case .userAuthenticationRequired: "userAuthenticationRequired"
        case .zeroByteResource: "zeroByteResource"
        case .cannotDecodeRawData: "cannotDecodeRawData"
        case .cannotDecodeContentData: "cannotDecodeContentData"
        case .cannotParseResponse: "cannotParseResponse"
        case .dataLengthExceedsMaximum: "dataLengthExceedsMaximum"
        case .secureConnectionFailed: "secureConnectionFailed"
        case .serverCertificateHasBadDate: "serverCertificateHasBadDate"
        case .serverCertificateUntrusted: "serverCertificateUntrusted"
        case .serverCertificateHasUnknownRoot: "serverCertificateHasUnknownRoot"
        case .serverCertificateNotYetValid: "serverCertificateNotYetValid"
        case .clientCertificateRejected: "clientCertificateRejected"
        case .clientCertificateRequired: "clientCertificateRequired"
        case .cannotLoadFromNetwork: "cannotLoadFromNetwork"
        case .cannotCreateFile: "cannotCreateFile"
        case .cannotOpenFile: "cannotOpenFile"
        case .cannotCloseFile: "cannotCloseFile"
        case .cannotWriteToFile: "cannotWriteToFile"
        case .cannotRemoveFile: "cannotRemoveFile"
        case .cannotMoveFile: "cannotMoveFile"
        case .downloadDecodingFailedMidStream: "downloadDecodingFailedMidStream"
        case .downloadDecodingFailedToComplete: "downloadDecodingFailedToComplete"
        case .fileDoesNotExist: "fileDoesNotExist"
        case .fileIsDirectory: "fileIsDirectory"
        case .noPermissionsToReadFile: "noPermissionsToReadFile"
        case .requestBodyStreamExhausted: "requestBodyStreamExhausted"
        case .backgroundSessionWasDisconnected: "backgroundSessionWasDisconnected"
        case .unknown: "unknown"
        default: String(code.rawValue)
        }
    }
}

/// Trace headers into a hop's request.
struct URLRequestHeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into request: inout URLRequest) {
        request.setValue(value, forHTTPHeaderField: key)
    }
}

/// One task's metrics, made only with a factory in use; metric objects are
/// made when a value is recorded (a backend caches its handlers by label
/// and dimensions).
struct MetricsRecorder: Sendable {
    let factory: any MetricsFactory
    let prefix: String
    /// method, scheme (and host when the configuration allows).
    let dimensions: [(String, String)]

    init(factory: any MetricsFactory, prefix: String, method: String, scheme: String, host: String?) {
        self.factory = factory
        self.prefix = prefix
        var dimensions = [("method", method), ("scheme", scheme)]
        if let host { dimensions.append(("host", host)) }
        self.dimensions = dimensions
    }

    func started() {
        Counter(label: prefix + ".requests.started", dimensions: dimensions, factory: factory).increment()
    }

    func finished(
        status: Int?, error: URLError?, duration: Duration, bytesSent: Int64, bytesReceived: Int64, redirects: Int,
        cacheHit: Bool
    ) {
        var finished = dimensions
        finished.append(("status_class", error != nil ? "error" : Self.statusClass(status)))
        Counter(label: prefix + ".requests.finished", dimensions: finished, factory: factory).increment()
        let (seconds, attoseconds) = duration.components
        Timer(label: prefix + ".request.duration", dimensions: finished, factory: factory)
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        if bytesSent > 0 {
            Counter(label: prefix + ".bytes.sent", dimensions: dimensions, factory: factory).increment(by: bytesSent)
        }
        if bytesReceived > 0 {
            Counter(label: prefix + ".bytes.received", dimensions: dimensions, factory: factory)
                .increment(by: bytesReceived)
        }
        if let error {
            var errorDimensions = dimensions
            errorDimensions.append(("error", TaskObservation.name(of: error.code)))
            Counter(label: prefix + ".errors", dimensions: errorDimensions, factory: factory).increment()
        }
        if redirects > 0 {
            Counter(label: prefix + ".redirects", dimensions: dimensions, factory: factory)
                .increment(by: Int64(redirects))
        }
        if cacheHit {
            Counter(label: prefix + ".cache.hits", dimensions: dimensions, factory: factory).increment()
        }
    }

    static func statusClass(_ status: Int?) -> String {
        guard let status, (100..<600).contains(status) else { return "none" }
        return "\(status / 100)xx"
    }
}
