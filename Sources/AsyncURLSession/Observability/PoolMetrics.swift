internal import CurlEngine
import Metrics

/// A session's connection-pool meters (issues 47, 58), as OpenTelemetry's
/// HTTP client connection metrics:
///
/// - `http.client.open_connections` (unit `{connection}`), one series per
///   `http.connection.state`, `active` (a transfer or a stream uses it) and
///   `idle` (kept for a later request): a swift-metrics `Meter` moved up
///   and down, which swift-otel exports as a gauge (it has no up-down
///   counter).
/// - `http.client.connection.duration` (unit `s`): a `Timer` (a histogram
///   in seconds in swift-otel), one value per closed connection, from its
///   socket's opening to its close. libcurl 7.88.1 does not say which
///   socket finished its connect, so one that failed to connect is counted
///   too (with the short time it was open).
/// - `<prefix>.requests.waiting_for_connection` (unit `{request}`), the
///   library's own (the conventions have none): transfers queued for a
///   connection, or waiting while theirs opens.
///
/// libcurl 7.88.1 names no connection's server in its socket callbacks, so
/// these carry no `server.address` or `server.port`; sessions with the same
/// factory add up. Made with the session when it has a metrics factory
/// (its configuration's, else the bound or bootstrapped one), or at its
/// first task made once one is bootstrapped (`SessionContext.observePool`);
/// without one the engine counts nothing.
///
/// The engine threads report differences (each thread's multi handle is a
/// part of the session's pool), so each meter is moved by increments and
/// decrements, never set.
final class PoolMetrics: ConnectionPoolObserver {
    private let active: Meter
    private let idle: Meter
    private let waiting: Meter
    private let duration: Timer

    init(factory: any MetricsFactory, prefix: String) {
        let open = HTTPClientMetrics.identity(
            unit: "{connection}",
            description: "Number of outbound HTTP connections that are currently active or idle on the client.")
        active = Meter(
            label: HTTPClientMetrics.Name.openConnections, dimensions: [("http.connection.state", "active")] + open,
            factory: factory)
        idle = Meter(
            label: HTTPClientMetrics.Name.openConnections, dimensions: [("http.connection.state", "idle")] + open,
            factory: factory)
        waiting = Meter(
            label: prefix + ".requests.waiting_for_connection",
            dimensions: HTTPClientMetrics.identity(
                unit: "{request}", description: "Requests waiting for a connection of the pool."),
            factory: factory)
        duration = Timer(
            label: HTTPClientMetrics.Name.connectionDuration,
            dimensions: HTTPClientMetrics.identity(
                unit: "s", description: "The duration of the successfully established outbound HTTP connections."),
            factory: factory)
    }

    /// The observer for a session of `configuration`, nil when it has no metrics factory.
    static func make(for configuration: SessionConfiguration) -> PoolMetrics? {
        TaskObservation.metricsFactory(for: configuration).map {
            PoolMetrics(factory: $0, prefix: configuration.metricsPrefix)
        }
    }

    func connectionPoolChanged(_ change: ConnectionPoolChange) {
        Self.move(active, by: change.inUse)
        Self.move(idle, by: change.idle)
        Self.move(waiting, by: change.waitingForConnection)
        for closed in change.closedConnectionDurations {
            let (seconds, attoseconds) = closed.components
            duration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }

    private static func move(_ meter: Meter, by difference: Int) {
        if difference > 0 {
            meter.increment(by: Double(difference))
        } else if difference < 0 {
            meter.decrement(by: Double(-difference))
        }
    }
}
