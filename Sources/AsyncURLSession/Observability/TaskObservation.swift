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

/// One task's spans and metrics (issues 47, 58): made when the task is
/// made, only when a tracer, an instrument or a metrics factory is in use
/// (the configuration's, else the bootstrapped one); a task without any
/// holds nil, and each hook is one nil check, as for `TaskLog`.
///
/// Span layout (OpenTelemetry's HTTP span conventions, stable: "each time
/// an HTTP request is resent, a new HTTP client span SHOULD be created"):
/// the task's span is the logical operation, of kind INTERNAL, from
/// `resume()` to the task's end, under the creator's span; beneath it, one
/// CLIENT span per request on the wire (a redirect hop, an authentication
/// resend, a retry), with its own `url.full`, `server.*`, status, resend
/// count and libcurl's timings as events, and the trace headers that
/// request carries name that span. A response taken from the cache is an
/// INTERNAL hop span (no request went out). The metrics follow the client
/// spans (`HTTPClientMetrics`).
///
/// Trace headers go to the task's origin only unless the configuration's
/// `propagatesTraceContextAcrossOrigins` says otherwise.
final class TaskObservation: Sendable {
    /// Starts the spans; nil when only metrics (or only an instrument) are on.
    let tracer: (any Tracer)?
    /// Injects trace headers: the configuration's tracer, else the
    /// bootstrapped instrument; nil when neither is in use.
    private let instrument: (any Instrument)?
    /// The task's creator's context (task-local), the task span's parent.
    private let parent: ServiceContext
    let metrics: HTTPClientMetrics?
    private let request: URLRequest
    private let acrossOrigins: Bool
    /// The configuration's `User-Agent`, else the one the engine sends
    /// (for `user_agent.original` when the request names none).
    let userAgent: String
    private let state = Mutex(State())

    private struct State {
        /// Made by `started()`, ended by `ended(...)`.
        var span: (any Span)?
        var startedAt: ContinuousClock.Instant?
        /// Attempts on the wire (hops launched), cache hits included.
        var attempts = 0
        /// The hop under way (between `hop` and `hopEnded`).
        var hop: OpenHop?
        /// The hop stopped in its TLS handshake for a decision and goes
        /// out again as the same request: its next `hop` reuses it.
        var hopResumes = false
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
        userAgent = configuration.httpAdditionalHeaders.first { $0.key.lowercased() == "user-agent" }?.value
            ?? RequestPreparation.defaultUserAgent
        metrics = factory.map {
            HTTPClientMetrics(
                factory: $0, prefix: configuration.metricsPrefix, includesServer: configuration.metricsIncludeHost)
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

    /// Whether hops' timings and sizes are wanted (the engine then reads
    /// them from libcurl even when no one else can see the task's metrics).
    var wantsHopMetrics: Bool { tracer != nil || metrics != nil }

    // MARK: Hooks (beside the task log's)

    /// The task was resumed (`log?.started`): its span starts.
    func started() {
        let span = tracer.map { tracer in
            let method = request.httpMethod ?? "GET"
            let known = Self.knownMethods.contains(method)
            let url = request.url
            let span = tracer.startSpan(known ? method : "HTTP", context: parent, ofKind: .internal)
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

    /// A hop goes out (`log?.hop`): its span starts (a client span, or an
    /// internal one for a cache hit), it counts as an active request, and
    /// the trace headers naming its span are put on `request` (the one
    /// prepared for the wire), unless it goes to another origin than the
    /// task's and the configuration keeps them to the task's origin.
    func hop(_ request: inout URLRequest, via: String) {
        let (taskSpan, resumed, resendCount, unended) = state.withLock {
            state -> ((any Span)?, OpenHop?, Int, OpenHop?) in
            state.attempts += 1
            if state.hopResumes, let hop = state.hop {
                state.hopResumes = false
                return (state.span, hop, 0, nil)
            }
            let unended = state.hop
            state.hop = nil
            state.hopResumes = false
            return (state.span, nil, state.attempts - 1, unended)
        }
        // A hop the task left without telling its end (it cannot: each
        // launch ends in `hopEnded`): ended here so its span is not lost.
        if let unended { end(unended, transfer: nil, error: nil) }
        let hop: OpenHop
        if let resumed {
            hop = resumed
        } else {
            hop = startHop(request, via: via, resendCount: resendCount, under: taskSpan?.context ?? parent)
            state.withLock { $0.hop = hop }
        }
        guard let instrument, via != "cache" else { return }
        guard acrossOrigins || RedirectPolicy.sameOrigin(self.request.url, request.url) else { return }
        instrument.inject(hop.span?.context ?? taskSpan?.context ?? parent, into: &request, using: URLRequestHeaderInjector())
    }

    /// The hop stopped in its TLS handshake for a decision (a server-trust
    /// or client-certificate challenge, or the handshake that names what is
    /// wrong with a certificate): nothing was sent, and the hop starts
    /// again, so it is not an attempt (as it is not a transaction in the
    /// task's metrics), and its span goes on.
    func hopStoppedForTLS() {
        state.withLock { state in
            state.attempts -= 1
            state.hopResumes = true
        }
    }

    /// The retry policy sends the request again: an `http.retry` event on
    /// the task's span naming the attempt to come, its delay and why.
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

    /// A response head arrived (`log?.response`), for the hop under way.
    func response(status: Int, httpVersion: String) {
        var version = Substring(httpVersion)
        if version.hasPrefix("HTTP/") { version = version.dropFirst(5) }
        let protocolVersion = version.isEmpty ? nil : String(version)
        state.withLock { state in
            state.status = status
            if let protocolVersion { state.protocolVersion = protocolVersion }
            state.hop?.status = status
            if let protocolVersion { state.hop?.protocolVersion = protocolVersion }
        }
    }

    /// A response came from the cache without the network.
    func cacheHit() {
        state.withLock { $0.cacheHit = true }
    }

    /// A hop's transfer ended: its span ends, with libcurl's timings of it
    /// as timed events, and its request is measured.
    func hopEnded(metrics transfer: TransferMetrics?, error: URLError?) {
        let hop = state.withLock { state -> OpenHop? in
            defer {
                state.hop = nil
                state.hopResumes = false
            }
            return state.hop
        }
        guard let hop else { return }
        end(hop, transfer: transfer, error: error)
    }

    /// The task ended (`log?.ended`); a second call does nothing.
    func ended(error: URLError?, bytesSent: Int64, bytesReceived: Int64, redirects: Int) {
        let (span, hop, stoppedForTLS, status, version, cacheHit, attempts, first) = state.withLock { state in
            defer {
                state.ended = true
                state.span = nil
                state.hop = nil
            }
            return (
                state.span, state.hop, state.hopResumes, state.status, state.protocolVersion, state.cacheHit,
                state.attempts, !state.ended
            )
        }
        guard first else { return }
        if let hop {
            if stoppedForTLS {
                // Its handshake stopped for a decision and it never went
                // out again: it sent nothing, so it is no request.
                abandon(hop)
            } else {
                // Still under way: it ends with the task (an error before
                // its transfer started, or a cancel that never reached the
                // engine).
                end(hop, transfer: nil, error: error)
            }
        }
        if cacheHit, let metrics {
            metrics.cacheHit(metrics.attributes(method: request.httpMethod ?? "GET", url: request.url))
        }
        guard let span else { return }
        let failed = status.map { $0 >= 400 } ?? false
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
            let readable = SpanError.URLError(error)
            span.recordError(readable)
            span.setStatus(SpanStatus(code: .error, message: readable.reason))
        } else if failed {
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }
}
