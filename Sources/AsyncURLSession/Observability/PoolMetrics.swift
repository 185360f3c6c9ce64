internal import CurlEngine
import Metrics

/// A session's connection-pool gauges (issue 47), as swift-metrics meters
/// under the configuration's prefix, with no dimensions (the pool is the
/// session's; sessions with the same factory and prefix add up):
/// `connections.open`, `connections.idle`, `connections.in_use` and
/// `requests.waiting_for_connection`. Made when the session is made, only
/// when it has a metrics factory (its configuration's, else the bound or
/// bootstrapped one); without one the engine counts nothing.
///
/// The engine threads report differences (each thread's multi handle is a
/// part of the session's pool), so each meter is moved by increments and
/// decrements, never set.
final class PoolMetrics: ConnectionPoolObserver {
    private let open: Meter
    private let idle: Meter
    private let inUse: Meter
    private let waiting: Meter

    init(factory: any MetricsFactory, prefix: String) {
        open = Meter(label: prefix + ".connections.open", factory: factory)
        idle = Meter(label: prefix + ".connections.idle", factory: factory)
        inUse = Meter(label: prefix + ".connections.in_use", factory: factory)
        waiting = Meter(label: prefix + ".requests.waiting_for_connection", factory: factory)
    }

    /// The observer for a session of `configuration`, nil when it has no metrics factory.
    static func make(for configuration: SessionConfiguration) -> PoolMetrics? {
        TaskObservation.metricsFactory(for: configuration).map {
            PoolMetrics(factory: $0, prefix: configuration.metricsPrefix)
        }
    }

    func connectionPoolChanged(_ change: ConnectionPoolChange) {
        Self.move(open, by: change.open)
        Self.move(idle, by: change.idle)
        Self.move(inUse, by: change.inUse)
        Self.move(waiting, by: change.waitingForConnection)
    }

    private static func move(_ meter: Meter, by difference: Int) {
        if difference > 0 {
            meter.increment(by: Double(difference))
        } else if difference < 0 {
            meter.decrement(by: Double(-difference))
        }
    }
}
