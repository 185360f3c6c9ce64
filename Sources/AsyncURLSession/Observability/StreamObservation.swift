import Foundation
import Instrumentation
import ServiceContextModule
import Tracing

/// A stream task's span (issue 47): one client span from the moment its
/// connection starts (the first read or write, or `startSecureConnection()`)
/// to its end, with the caller of that first call as parent. A stream is
/// bytes, not HTTP, so the span has no HTTP attributes and the request
/// metrics do not count it; its connection is in the pool gauges.
///
/// Made only when a tracer is in use (`TaskObservation.tracer(for:)`),
/// once per connection.
enum StreamObservation {
    static func start(for connection: StreamConnection) {
        guard let tracer = TaskObservation.tracer(for: connection.context.configuration) else { return }
        let secure = connection.guarded.withLock { $0.state.secure }
        let span = tracer.startSpan("stream", context: ServiceContext.current ?? .topLevel, ofKind: .client)
        span.updateAttributes { attributes in
            attributes["server.address"] = SpanAttribute.string(connection.host)
            attributes["server.port"] = SpanAttribute.int64(Int64(connection.port))
            attributes["network.transport"] = "tcp"
            attributes["asyncurlsession.tls"] = SpanAttribute.bool(secure)
        }
        connection.addObserver { event in
            guard case .ended(let error) = event else { return }
            if let error {
                span.attributes["error.type"] = SpanAttribute.string(TaskObservation.name(of: error.code))
                span.recordError(error)
                span.setStatus(SpanStatus(code: .error, message: TaskObservation.name(of: error.code)))
            }
            span.end()
        }
    }
}

extension ByteStreamClient {
    func connecting(_ connection: StreamConnection) {
        StreamObservation.start(for: connection)
    }
}
