import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Metrics
import MetricsTestKit
import Testing
import TestSupport

@testable import AsyncURLSession

/// Issue 58: OpenTelemetry's HTTP client metrics (stable semantic
/// conventions), as TestMetrics sees them: names, instrument types, units
/// and descriptions (the `unit` and `description` dimensions swift-otel
/// reads), and the attributes of each request sent.
@Suite struct HTTPClientMetricsTests {
    /// A dimension list as a dictionary (each key appears once).
    static func dictionary(_ dimensions: [(String, String)]) -> [String: String] {
        Dictionary(dimensions, uniquingKeysWith: { first, _ in first })
    }

    static let durationIdentity = ["unit": "s", "description": "Duration of HTTP client requests."]
    static let activeIdentity = ["unit": "{request}", "description": "Number of active HTTP requests."]

    static func timers(_ metrics: TestMetrics, _ label: String) -> [(dimensions: [String: String], values: [Int64])] {
        metrics.timers.filter { $0.label == label }.map { (dictionary($0.dimensions), $0.values) }
    }

    @Test func aRequest_isMeasured_asTheConventionsName_type_unitAndAttributes() async throws {
        let metrics = TestMetrics()
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.metricsFactory = metrics
            configuration.metricsIncludeHost = true
            let task = Session(configuration: configuration).dataTask(with: server.url("/bytes/10"))
            task.resume()
            for try await _ in task.events {}

            let base = [
                "http.request.method": "GET", "url.scheme": "http", "server.address": "127.0.0.1",
                "server.port": String(server.port),
            ]
            // http.client.request.duration: a Timer (a histogram in seconds in swift-otel).
            let durations = Self.timers(metrics, "http.client.request.duration")
            #expect(durations.count == 1)
            let ended = base.merging(["http.response.status_code": "200", "network.protocol.version": "1.1"]) { $1 }
            #expect(durations.first?.dimensions == ended.merging(Self.durationIdentity) { $1 })
            #expect(durations.first?.values.count == 1 && (durations.first?.values[0] ?? 0) > 0)

            // http.client.active_requests: a Meter, up then down.
            let active = try metrics.expectMeter(
                "http.client.active_requests", Array(base) + Array(Self.activeIdentity))
            #expect(active.values == [1, 0])

            // The body sizes: aggregating Recorders (histograms), in bytes.
            let response = metrics.recorders.filter { $0.label == "http.client.response.body.size" }
            #expect(response.count == 1)
            #expect(response.first?.values == [10])
            #expect(response.first.map { Self.dictionary($0.dimensions)["unit"] } == "By")
            let request = metrics.recorders.filter { $0.label == "http.client.request.body.size" }
            #expect(request.first?.values == [0])
            #expect(request.first.map { Self.dictionary($0.dimensions)["unit"] } == "By")

            // Every instrument the task made has a unit and a description.
            let all: [[(String, String)]] = metrics.timers.map(\.dimensions) + metrics.meters.map(\.dimensions)
                + metrics.recorders.map(\.dimensions) + metrics.counters.map(\.dimensions)
            #expect(all.allSatisfy { Self.dictionary($0)["unit"] != nil && Self.dictionary($0)["description"] != nil })
            // None of the old names.
            #expect(!metrics.counters.contains { $0.label.hasPrefix("asyncurlsession.requests") })
        }
    }

    @Test func theServer_isADimensionOnlyWhenTheConfigurationSaysSo() async throws {
        let metrics = TestMetrics()
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.metricsFactory = metrics
            _ = try await Session(configuration: configuration).data(from: server.url("/bytes/1"))
            let durations = Self.timers(metrics, "http.client.request.duration")
            #expect(durations.count == 1)
            #expect(durations.first?.dimensions["server.address"] == nil)
            #expect(durations.first?.dimensions["server.port"] == nil)
            #expect(durations.first?.dimensions["http.request.method"] == "GET")
        }
    }

    @Test func eachRequestOfARedirectChain_isMeasured_withItsOwnStatus() async throws {
        let metrics = TestMetrics()
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.metricsFactory = metrics
            let task = Session(configuration: configuration).dataTask(with: server.url("/redirect/2"))
            task.resume()
            for try await _ in task.events {}
            let byStatus = Dictionary(
                Self.timers(metrics, "http.client.request.duration").map {
                    ($0.dimensions["http.response.status_code"] ?? "-", $0.values.count)
                }, uniquingKeysWith: +)
            #expect(byStatus == ["302": 2, "200": 1])
        }
    }

    @Test func aRefusedConnection_anda404_setErrorType() async throws {
        let metrics = TestMetrics()
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.metricsFactory = metrics
            let session = Session(configuration: configuration)
            await #expect(throws: URLError.self) { _ = try await session.data(from: URL(string: "http://127.0.0.1:1/")!) }
            _ = try await session.data(from: server.url("/status/404"))
            let durations = Self.timers(metrics, "http.client.request.duration")
            let refused = durations.first { $0.dimensions["error.type"] == "cannotConnectToHost" }
            #expect(refused != nil, "\(durations.map(\.dimensions))")
            #expect(refused?.dimensions["http.response.status_code"] == nil)
            let notFound = durations.first { $0.dimensions["http.response.status_code"] == "404" }
            #expect(notFound?.dimensions["error.type"] == "404")
            // Both ended: nothing is left active.
            #expect(metrics.meters.filter { $0.label == "http.client.active_requests" }.allSatisfy { $0.lastValue == 0 })
        }
    }

    @Test func aCacheHit_isNoRequest_butCountedUnderThePrefix() async throws {
        let metrics = TestMetrics()
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.metricsFactory = metrics
            configuration.metricsPrefix = "myapp.http"
            configuration.responseCache = ResponseCache(memoryCapacity: 4 << 20)
            let session = Session(configuration: configuration)
            let url = server.url("/cache?cc=max-age=600")
            _ = try await session.data(from: url)
            _ = try await session.data(from: url)
            #expect(Self.timers(metrics, "http.client.request.duration").map(\.values.count) == [1])
            let hits = metrics.counters.filter { $0.label == "myapp.http.cache.hits" }
            #expect(hits.map(\.totalValue) == [1])
            #expect(hits.first.map { Self.dictionary($0.dimensions)["unit"] } == "{response}")
        }
    }
}
