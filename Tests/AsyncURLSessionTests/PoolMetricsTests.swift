@testable import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import MetricsTestKit
import Testing

/// Issue 47: a session's connection-pool gauges (swift-metrics meters)
/// against the loopback server, with a TestMetrics of the session's own.
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

        /// The meter's current value, 0 before anything moved it.
        func value(_ name: String) -> Double {
            (try? metrics.expectMeter("asyncurlsession." + name))?.lastValue ?? 0
        }

        /// Every value the meter took, in order.
        func history(_ name: String) -> [Double] {
            (try? metrics.expectMeter("asyncurlsession." + name))?.values ?? []
        }

        /// Waits up to 10 s (scaled) for `condition`; returns whether it held.
        func eventually(_ condition: () -> Bool) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(scaledTimeout(10))
            while ContinuousClock.now < deadline {
                if condition() { return true }
                try await Task.sleep(for: .milliseconds(10))
            }
            return condition()
        }
    }

    @Test func twoRequestsInARow_useOneConnection_leftIdleAfterwards() async throws {
        let pool = Pool()
        try await withServer { server in
            let session = Session(configuration: pool.configuration())
            let (first, _) = try await session.data(from: server.url("/connection"))
            #expect(pool.value("connections.open") == 1)
            #expect(pool.value("connections.idle") == 1)
            #expect(pool.value("connections.in_use") == 0)
            let (second, _) = try await session.data(from: server.url("/connection"))
            #expect(first == second, "the second request reused the first one's connection")
            #expect(pool.value("connections.open") == 1)
            #expect(pool.value("connections.idle") == 1)
            #expect(pool.value("connections.in_use") == 0)
            #expect(pool.value("requests.waiting_for_connection") == 0)
            // In use once per request, never two connections.
            #expect(pool.history("connections.in_use").max() == 1)
            #expect(pool.history("connections.open").max() == 1)
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
            #expect(pool.history("connections.open").max() == 1, "the limit held")
            #expect(pool.history("connections.in_use").max() == 1)
            #expect(pool.value("connections.idle") == 1)
        }
    }

    @Test func invalidatedSession_closesItsConnections() async throws {
        let pool = Pool()
        try await withServer { server in
            let session = Session(configuration: pool.configuration())
            _ = try await session.data(from: server.url("/bytes/10"))
            #expect(pool.value("connections.open") == 1)
            session.finishTasksAndInvalidate()
            let closed = try await pool.eventually { pool.value("connections.open") == 0 }
            #expect(closed)
            #expect(pool.value("connections.idle") == 0)
            #expect(pool.value("connections.in_use") == 0)
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
            let filled = try await pool.eventually { task.countOfBytesReceived >= 1 << 20 }
            #expect(filled)
            try await Task.sleep(for: .milliseconds(200))
            #expect(pool.value("connections.in_use") == 1)
            #expect(pool.value("connections.idle") == 0)
            task.cancel()
        }
    }

    /// Off: no factory configured, bound or bootstrapped, so the engine is
    /// given no observer and counts nothing (the plain socket hooks, no
    /// pre-request callback, one nil check in the socket callback).
    @Test func sessionWithoutAFactory_hasNoPoolObserver() {
        #expect(PoolMetrics.make(for: testConfiguration()) == nil)
    }
}
