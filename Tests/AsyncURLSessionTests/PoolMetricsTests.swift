@testable import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Metrics
import MetricsTestKit
import Testing

/// Issues 47 and 58: a session's connection-pool meters, as OpenTelemetry's
/// `http.client.open_connections` (a swift-metrics meter per
/// `http.connection.state`, `active` and `idle`) and
/// `http.client.connection.duration`, against the loopback server, with a
/// TestMetrics of the session's own.
/// The engine tells them at the end of the turn that changed them, before
/// that turn's completions; a test still waits (bounded) for a value after
/// an invalidation, which the engine serves on its own.
@Suite struct PoolMetricsTests {
    private struct Pool {
        let metrics = TestMetrics()

        func configuration() -> SessionConfiguration {
            var configuration = testConfiguration()
            configuration.metricsFactory = metrics
            return configuration
        }

        static let openIdentity = [
            ("unit", "{connection}"),
            ("description", "Number of outbound HTTP connections that are currently active or idle on the client."),
        ]
        static let waitingIdentity = [
            ("unit", "{request}"), ("description", "Requests waiting for a connection of the pool."),
        ]

        func meter(_ name: String) -> TestMeter? {
            switch name {
            case "active", "idle":
                try? metrics.expectMeter(
                    "http.client.open_connections", [("http.connection.state", name)] + Self.openIdentity)
            default:
                try? metrics.expectMeter("asyncurlsession." + name, Self.waitingIdentity)
            }
        }

        /// The meter's current value, 0 before anything moved it: `active`
        /// and `idle` connections, or `requests.waiting_for_connection`.
        func value(_ name: String) -> Double {
            meter(name)?.lastValue ?? 0
        }

        /// The open connections, active or idle.
        var open: Double { value("active") + value("idle") }

        /// Every value the meter took, in order.
        func history(_ name: String) -> [Double] {
            meter(name)?.values ?? []
        }

        /// The lifetimes of the connections closed so far, in nanoseconds.
        var closedDurations: [Int64] {
            metrics.timers.filter { $0.label == "http.client.connection.duration" }.flatMap(\.values)
        }
    }

    @Test func twoRequestsInARow_useOneConnection_leftIdleAfterwards() async throws {
        let pool = Pool()
        try await withServer { server in
            let session = Session(configuration: pool.configuration())
            let (first, _) = try await session.data(from: server.url("/connection"))
            #expect(pool.open == 1)
            #expect(pool.value("idle") == 1)
            #expect(pool.value("active") == 0)
            let (second, _) = try await session.data(from: server.url("/connection"))
            #expect(first == second, "the second request reused the first one's connection")
            #expect(pool.open == 1)
            #expect(pool.value("idle") == 1)
            #expect(pool.value("active") == 0)
            #expect(pool.value("requests.waiting_for_connection") == 0)
            // Never two connections (none closed). The engine reports each
            // turn's net change, so a request that opened, ran and ended in
            // one turn (a loaded machine) leaves no `active` value at all.
            #expect((pool.history("active").max() ?? 0) <= 1)
            #expect(pool.history("idle").max() == 1)
            #expect(pool.closedDurations.isEmpty)
        }
    }

    @Test func perHostLimitOfOne_queuesTheOtherRequests_untilTheConnectionIsFree() async throws {
        let pool = Pool()
        try await withServer { server in
            var configuration = pool.configuration()
            configuration.httpMaximumConnectionsPerHost = 1
            let session = Session(configuration: configuration)
            let url = server.url("/delay/400")
            async let a = session.data(from: url)
            async let b = session.data(from: url)
            async let c = session.data(from: url)
            async let d = session.data(from: url)
            _ = try await (a, b, c, d)
            // While one had the connection (the server held its response
            // for 400 ms), the three others waited for it: all four at
            // first if they came before it was open.
            let waiting = pool.history("requests.waiting_for_connection")
            #expect((waiting.max() ?? 0) >= 3, "waiting: \(waiting)")
            #expect(waiting.last == 0)
            #expect(pool.history("active").max() == 1, "the limit held")
            #expect(pool.history("idle").max() == 1)
            #expect(pool.value("idle") == 1)
        }
    }

    @Test func invalidatedSession_closesItsConnections() async throws {
        let pool = Pool()
        try await withServer { server in
            let session = Session(configuration: pool.configuration())
            _ = try await session.data(from: server.url("/bytes/10"))
            #expect(pool.open == 1)
            #expect(pool.closedDurations.isEmpty)
            session.finishTasksAndInvalidate()
            let closed = try await eventually { pool.open == 0 }
            #expect(closed)
            #expect(pool.value("idle") == 0)
            #expect(pool.value("active") == 0)
            // Its lifetime, in seconds in swift-otel (a Timer).
            let measured = try await eventually { pool.closedDurations.count == 1 }
            #expect(measured)
            #expect(pool.closedDurations.allSatisfy { $0 > 0 })
            let identity = pool.metrics.timers.first { $0.label == "http.client.connection.duration" }
                .map { Dictionary($0.dimensions, uniquingKeysWith: { a, _ in a }) }
            #expect(identity?["unit"] == "s")
        }
    }

    @Test func connectionOfAPausedTransfer_staysInUse() async throws {
        let pool = Pool()
        try await withServer { server in
            let session = Session(configuration: pool.configuration())
            let task = session.dataTask(with: server.url("/bytes/\(64 << 20)"))
            task.resume()
            // Nobody reads the events: the transfer pauses once its buffer
            // is full, and libcurl stops watching the connection's socket.
            let filled = try await eventually { task.countOfBytesReceived >= 1 << 20 }
            #expect(filled)
            // The meters move at the end of the engine's turn, which a
            // single busy CPU can delay past any fixed wait: waited for.
            let inUse = try await eventually { pool.value("active") == 1 }
            #expect(inUse)
            try await Task.sleep(for: .milliseconds(200))
            #expect(pool.value("active") == 1)
            #expect(pool.value("idle") == 0)
            task.cancel()
        }
    }

    /// Off: no factory configured, bound or bootstrapped, so the engine is
    /// given no observer and counts nothing (the plain socket hooks, no
    /// pre-request callback, one nil check in the socket callback).
    @Test func sessionWithoutAFactory_hasNoPoolObserver() {
        #expect(PoolMetrics.make(for: testConfiguration()) == nil)
    }

    /// Issue 58: a session made before a metrics backend is bootstrapped
    /// (`Session.shared`, say) gets its pool meters at its first task made
    /// once there is one (bound task-locally here, as `MetricsSystem.factory`
    /// reads a binding first).
    @Test func sessionMadeBeforeTheBackend_getsItsPoolMeters_atItsFirstTaskAfterIt() async throws {
        let pool = Pool()
        try await withServer { server in
            // Made with no backend: its pool has no meters.
            let session = Session(configuration: testConfiguration())
            #expect(pool.metrics.meters.isEmpty)
            // The server holds its answer, so the request is in use across
            // several of the engine's turns (each reports its net change:
            // a request begun and ended in one turn would show no `active`).
            let url = server.url("/delay/200")
            try await withMetricsFactory(pool.metrics) {
                _ = try await session.data(from: url)
            }
            // The first task made with one gave the pool its meters before
            // its request went out: its connection counts, idle now, and no
            // meter went below zero (meters given mid-request would see the
            // end's decrements without the start's increments).
            #expect(pool.open == 1, "\(pool.metrics.meters.map(\.label))")
            #expect(pool.value("idle") == 1)
            #expect(pool.history("active").max() == 1)
            #expect(pool.value("active") == 0)
            let waiting = pool.history("requests.waiting_for_connection")
            #expect(waiting.allSatisfy { $0 >= 0 } && pool.value("requests.waiting_for_connection") == 0, "\(waiting)")
        }
    }
}
