internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tracing

/// One hop of a task while it runs (issue 58): its span and what its
/// request metrics need at its end.
struct OpenHop: Sendable {
    /// A client span (an internal one for a cache hit); nil without a tracer.
    let span: (any Span)?
    let startedAt: ContinuousClock.Instant
    /// The request metrics' attributes; nil for a cache hit (no request
    /// went out) or without metrics.
    let metricAttributes: [(String, String)]?
    var status: Int?
    var protocolVersion: String?
}

extension TaskObservation {
    /// Starts a hop's span and counts its request as active.
    func startHop(_ request: URLRequest, via: String, resendCount: Int, under context: ServiceContext) -> OpenHop {
        let method = request.httpMethod ?? "GET"
        let url = request.url
        let span = tracer.map { tracer in
            let known = Self.knownMethods.contains(method)
            let span = tracer.startSpan(
                known ? method : "HTTP", context: context, ofKind: via == "cache" ? .internal : .client)
            span.updateAttributes { attributes in
                attributes["http.request.method"] = SpanAttribute.string(known ? method : "_OTHER")
                if !known { attributes["http.request.method_original"] = SpanAttribute.string(method) }
                if let url {
                    attributes["url.full"] = SpanAttribute.string(TaskLog.traceURL(url))
                    if let scheme = url.scheme?.lowercased() { attributes["url.scheme"] = SpanAttribute.string(scheme) }
                    if let host = url.host { attributes["server.address"] = SpanAttribute.string(host) }
                    if let port = Self.port(of: url) { attributes["server.port"] = SpanAttribute.int64(Int64(port)) }
                }
                if resendCount > 0 { attributes["http.request.resend_count"] = SpanAttribute.int64(Int64(resendCount)) }
                attributes["user_agent.original"] = SpanAttribute.string(
                    request.value(forHTTPHeaderField: "User-Agent") ?? userAgent)
                attributes["asyncurlsession.via"] = SpanAttribute.string(via)
            }
            return span
        }
        var metricAttributes: [(String, String)]?
        if let metrics, via != "cache" {
            let attributes = metrics.attributes(method: method, url: url)
            metrics.requestStarted(attributes)
            metricAttributes = attributes
        }
        return OpenHop(span: span, startedAt: .now, metricAttributes: metricAttributes)
    }

    /// Ends a hop: its span's outcome, sizes, peer and timings, and its
    /// request's metrics. `transfer` is libcurl's account of it, nil when
    /// it never reached the engine.
    func end(_ hop: OpenHop, transfer: TransferMetrics?, error: URLError?) {
        let errorType = error.map { Self.name(of: $0.code) } ?? hop.status.flatMap { $0 >= 400 ? String($0) : nil }
        // Sizes only for a request that got an answer: a refused one sent
        // nothing, whatever libcurl counted.
        let sizes = hop.status == nil ? nil : transfer.map { ($0.requestBodyBytes, $0.responseBodyBytes) }
        if let span = hop.span {
            Self.describe(span, hop: hop, transfer: transfer, errorType: errorType, sizes: sizes)
            if let error {
                let readable = SpanError.URLError(error)
                span.recordError(readable)
                span.setStatus(SpanStatus(code: .error, message: readable.reason))
            } else if errorType != nil {
                span.setStatus(SpanStatus(code: .error))
            }
            span.end()
        }
        if let metrics, let attributes = hop.metricAttributes {
            metrics.requestEnded(
                attributes, duration: hop.startedAt.duration(to: .now), status: hop.status, errorType: errorType,
                protocolVersion: hop.protocolVersion, bodySizes: sizes.map { (sent: $0.0, received: $0.1) })
        }
    }

    /// Drops a hop that sent nothing (its TLS handshake stopped for a
    /// decision, and the task ended there): it is no longer active, and its
    /// span is left unended, so no tracer exports it (swift-distributed-
    /// tracing has no way to discard a started span).
    func abandon(_ hop: OpenHop) {
        if let metrics, let attributes = hop.metricAttributes { metrics.requestAbandoned(attributes) }
    }

    private static func describe(
        _ span: any Span, hop: OpenHop, transfer: TransferMetrics?, errorType: String?, sizes: (Int64, Int64)?
    ) {
        // libcurl's timings exist only for a hop it ran (a cache hit or a
        // stub's answer has none).
        let timed = transfer.flatMap { $0.total > 0 || $0.firstByte != nil ? $0 : nil }
        span.updateAttributes { attributes in
            if let status = hop.status { attributes["http.response.status_code"] = SpanAttribute.int64(Int64(status)) }
            if let errorType { attributes["error.type"] = SpanAttribute.string(errorType) }
            if let version = hop.protocolVersion {
                attributes["network.protocol.name"] = "http"
                attributes["network.protocol.version"] = SpanAttribute.string(version)
            }
            if let sizes {
                if sizes.0 > 0 { attributes["http.request.body.size"] = SpanAttribute.int64(sizes.0) }
                attributes["http.response.body.size"] = SpanAttribute.int64(sizes.1)
            }
            guard let timed else { return }
            if let address = timed.remoteAddress { attributes["network.peer.address"] = SpanAttribute.string(address) }
            if let port = timed.remotePort { attributes["network.peer.port"] = SpanAttribute.int64(Int64(port)) }
            attributes["asyncurlsession.connection_reused"] = SpanAttribute.bool(timed.reusedConnection)
            attributes["asyncurlsession.timing.total"] = SpanAttribute.double(timed.total)
        }
        guard let timed else { return }
        let start = timed.fetchStart.timeIntervalSince1970
        let timings: [(String, Double?)] = [
            ("dns", timed.domainLookup), ("connect", timed.connect), ("tls", timed.secureConnection),
            ("first_byte", timed.firstByte),
        ]
        for (name, offset) in timings {
            guard let offset, offset > 0 else { continue }
            span.attributes["asyncurlsession.timing.\(name)"] = SpanAttribute.double(offset)
            let instant = DefaultTracerClock.Instant(nanosecondsSinceEpoch: UInt64(max(0, (start + offset) * 1e9)))
            span.addEvent(SpanEvent(name: name, at: instant))
        }
    }
}
