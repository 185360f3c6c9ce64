import AsyncURLSession
import Foundation
import InMemoryTracing
import Tracing

/// `--trace`: the transfer's spans, kept in memory by a tracer of the
/// session's own, printed to standard error once it ends: the task's span
/// (the logical operation) and beneath it each request it sent (a client
/// span per hop), each with its duration and main attributes, then its
/// events (libcurl's DNS, connect, TLS and first-byte times, a retry) at
/// their offsets from the span's start, so a person sees where the time
/// went without a tracing backend.
struct TracePrinter {
    let tracer = InMemoryTracer()

    /// The attributes worth a line, in this order.
    private static let shown = [
        "http.request.method", "url.full", "http.response.status_code", "network.protocol.version",
        "http.request.resend_count", "error.type", "asyncurlsession.via", "network.peer.address",
        "asyncurlsession.connection_reused", "http.response.body.size",
    ]

    func printSpans() {
        let spans = tracer.finishedSpans.sorted {
            $0.startInstant.nanosecondsSinceEpoch < $1.startInstant.nanosecondsSinceEpoch
        }
        let recorded = Set(spans.map(\.spanID))
        var lines: [String] = []
        // Roots first (a span whose parent is not here), each followed by its hops.
        for root in spans where !(root.parentSpanID.map(recorded.contains) ?? false) {
            Self.describe(root, indent: "", into: &lines)
            for hop in spans where hop.parentSpanID == root.spanID {
                Self.describe(hop, indent: "  ", into: &lines)
            }
        }
        if lines.isEmpty { lines = ["trace: no span was recorded"] }
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }

    private static func describe(_ span: FinishedInMemorySpan, indent: String, into lines: inout [String]) {
        let start = span.startInstant.nanosecondsSinceEpoch
        let duration = milliseconds(span.endInstant.nanosecondsSinceEpoch, since: start)
        let status = span.status.map { $0.code == .error ? ", error" : "" } ?? ""
        lines.append("\(indent)span \(span.operationName) (\(span.kind)), \(duration)\(status)")
        lines.append(contentsOf: describe(span.attributes, indent: indent + "    "))
        for event in span.events {
            let offset = milliseconds(event.nanosecondsSinceEpoch, since: start)
            lines.append("\(indent)  +\(offset)  \(event.name)")
            lines.append(contentsOf: describe(event.attributes, indent: indent + "      "))
        }
    }

    private static func describe(_ attributes: SpanAttributes, indent: String) -> [String] {
        var values: [String: String] = [:]
        attributes.forEach { name, value in values[name] = text(value) }
        return shown.compactMap { name in values[name].map { "\(indent)\(name) = \($0)" } }
    }

    private static func text(_ value: SpanAttribute) -> String {
        switch value {
        case .string(let text): text
        case .int64(let number): "\(number)"
        case .int32(let number): "\(number)"
        case .double(let number): "\(number)"
        case .bool(let flag): "\(flag)"
        default: "\(value)"
        }
    }

    private static func milliseconds(_ nanoseconds: UInt64, since start: UInt64) -> String {
        let value = nanoseconds >= start ? Double(nanoseconds - start) / 1e6 : 0
        return String(format: "%.1f ms", value)
    }
}
