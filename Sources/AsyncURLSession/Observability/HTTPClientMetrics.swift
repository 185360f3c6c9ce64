import Foundation
import Metrics

/// OpenTelemetry's HTTP client metrics (stable semantic conventions,
/// issue 58), recorded per request on the wire (a hop: a redirect's, an
/// authentication resend's, a retry's), as the client spans are:
///
/// - `http.client.request.duration`: a swift-metrics `Timer` (unit `s`).
///   swift-otel makes a `Timer` a histogram and exports its values as
///   seconds (its buckets are durations), which is what the conventions
///   ask; a `Recorder` of seconds would get value buckets of 0-10000.
/// - `http.client.active_requests`: a `Meter` moved up and down (unit
///   `{request}`). swift-otel has no up-down counter; it maps a `Meter` to
///   a gauge whose value is the running sum, the closest it has.
/// - `http.client.request.body.size`, `http.client.response.body.size`:
///   aggregating `Recorder`s, which swift-otel makes histograms (unit `By`).
///
/// Unit and description go in as the `unit` and `description` dimensions,
/// which swift-otel takes as the instrument's own fields (not attributes);
/// other backends see them as two constant dimensions.
///
/// `server.address` and `server.port` (required by the conventions) are
/// dimensions only when `SessionConfiguration.metricsIncludeHost` says so:
/// a client of many hosts would otherwise make time series per host.
///
/// Metric objects are made when a value is recorded: a backend caches its
/// handlers by label and dimensions.
struct HTTPClientMetrics: Sendable {
    let factory: any MetricsFactory
    /// The first part of the library's own metrics (those the conventions
    /// have no name for): `<prefix>.cache.hits`.
    let prefix: String
    let includesServer: Bool

    enum Name {
        static let requestDuration = "http.client.request.duration"
        static let activeRequests = "http.client.active_requests"
        static let requestBodySize = "http.client.request.body.size"
        static let responseBodySize = "http.client.response.body.size"
        static let openConnections = "http.client.open_connections"
        static let connectionDuration = "http.client.connection.duration"
    }

    static func identity(unit: String, description: String) -> [(String, String)] {
        [("unit", unit), ("description", description)]
    }

    static let durationIdentity = identity(unit: "s", description: "Duration of HTTP client requests.")
    static let activeIdentity = identity(unit: "{request}", description: "Number of active HTTP requests.")
    static let requestBodyIdentity = identity(unit: "By", description: "Size of HTTP client request bodies.")
    static let responseBodyIdentity = identity(unit: "By", description: "Size of HTTP client response bodies.")

    /// One request's attributes known when it goes out: method, scheme and
    /// (when allowed) its server.
    func attributes(method: String, url: URL?) -> [(String, String)] {
        var attributes = [
            ("http.request.method", TaskObservation.knownMethods.contains(method) ? method : "_OTHER"),
            ("url.scheme", url?.scheme?.lowercased() ?? ""),
        ]
        if includesServer, let url {
            if let host = url.host { attributes.append(("server.address", host)) }
            if let port = TaskObservation.port(of: url) { attributes.append(("server.port", String(port))) }
        }
        return attributes
    }

    /// A request went out.
    func requestStarted(_ attributes: [(String, String)]) {
        Meter(label: Name.activeRequests, dimensions: attributes + Self.activeIdentity, factory: factory).increment()
    }

    /// A request ended: its duration and body sizes, with its outcome.
    func requestEnded(
        _ attributes: [(String, String)], duration: Duration, status: Int?, errorType: String?,
        protocolVersion: String?, bodySizes: (sent: Int64, received: Int64)?
    ) {
        Meter(label: Name.activeRequests, dimensions: attributes + Self.activeIdentity, factory: factory).decrement()
        var ended = attributes
        if let status { ended.append(("http.response.status_code", String(status))) }
        if let errorType { ended.append(("error.type", errorType)) }
        if let protocolVersion { ended.append(("network.protocol.version", protocolVersion)) }
        let (seconds, attoseconds) = duration.components
        Timer(label: Name.requestDuration, dimensions: ended + Self.durationIdentity, factory: factory)
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        guard let bodySizes else { return }
        Recorder(label: Name.requestBodySize, dimensions: ended + Self.requestBodyIdentity, factory: factory)
            .record(bodySizes.sent)
        Recorder(label: Name.responseBodySize, dimensions: ended + Self.responseBodyIdentity, factory: factory)
            .record(bodySizes.received)
    }

    /// A request that was counted as started sent nothing after all.
    func requestAbandoned(_ attributes: [(String, String)]) {
        Meter(label: Name.activeRequests, dimensions: attributes + Self.activeIdentity, factory: factory).decrement()
    }

    /// A response came from the cache without a request (none of the
    /// conventions' instruments counts it).
    func cacheHit(_ attributes: [(String, String)]) {
        Counter(
            label: prefix + ".cache.hits",
            dimensions: attributes
                + Self.identity(unit: "{response}", description: "Responses taken from the response cache."),
            factory: factory
        ).increment()
    }
}
