// One cell of the results: a client on a workload, summarized over its
// measured runs (medians), with the ratio to the baseline client.
import BenchClientSupport
import Foundation

enum CellStatus: String, Codable, Sendable {
    case ok
    case unsupported
    case failed
    case notBuilt = "not built"
    case notRun = "not run"
}

struct CellSummary: Codable, Sendable {
    var client: String
    var workload: String
    var status: CellStatus
    var reason: String?
    var metricMedian: Double?
    /// metricMedian / the baseline's metricMedian (for every metric kind;
    /// read it with the metric's direction: >1 is better for req/s and MB/s,
    /// worse for memory).
    var ratioToBaseline: Double?
    var metricSpread: Double?
    var cpuSecondsMedian: Double?
    var cpuMicrosecondsPerRequest: Double?
    var peakRSSMiBMedian: Double?
    /// Median over runs of the connections nginx accepted.
    var serverConnectionsMedian: Double?
    /// W7: median over runs of the most client connections open at once.
    var peakActiveConnectionsMedian: Double?
    /// Median over runs of the requests nginx answered (access-log lines).
    var serverAnsweredMedian: Double?
    /// W9: each latency figure's median over runs.
    var latencyMedians: LatencySummary?
    /// W9: median over runs of the requests answered per second (the
    /// arrival rate, unless the client fell behind).
    var achievedRateMedian: Double?
    var elapsedSecondsMedian: Double?
    var httpVersion: String?
    var api: String?
    var notes: [String] = []
    var runs: [RunRecord] = []
    var warmups: [RunRecord] = []

    enum CodingKeys: String, CodingKey {
        case client, workload, status, reason
        case metricMedian = "metric_median"
        case ratioToBaseline = "ratio_to_baseline"
        case metricSpread = "metric_spread"
        case cpuSecondsMedian = "cpu_s_median"
        case cpuMicrosecondsPerRequest = "cpu_us_per_request"
        case peakRSSMiBMedian = "peak_rss_mib_median"
        case serverConnectionsMedian = "server_connections_median"
        case peakActiveConnectionsMedian = "peak_active_connections_median"
        case serverAnsweredMedian = "server_answered_median"
        case latencyMedians = "latency_medians"
        case achievedRateMedian = "achieved_rate_median"
        case elapsedSecondsMedian = "elapsed_s_median"
        case httpVersion = "http_version"
        case api, notes, runs, warmups
    }

    init(client: String, workload: Workload, status: CellStatus, reason: String? = nil) {
        self.client = client
        self.workload = workload.id
        self.status = status
        self.reason = reason
    }

    /// Summarizes the runs of one client on one workload.
    init(client: String, workload: Workload, warmups: [RunRecord], runs: [RunRecord]) {
        self.init(client: client, workload: workload, status: .notRun)
        self.warmups = warmups
        self.runs = runs
        let all = warmups + runs
        api = all.compactMap { $0.result?.api }.first
        if let unsupported = all.first(where: { $0.status == .unsupported }) {
            status = .unsupported
            reason = unsupported.reason
            return
        }
        let good = runs.filter { $0.status == .ok }
        let failed = all.filter { $0.status == .failed }
        if good.isEmpty {
            status = failed.isEmpty ? .notRun : .failed
            reason = failed.first?.reason
            return
        }
        status = .ok
        if !failed.isEmpty {
            notes.append("\(failed.count) of \(all.count) runs failed: \(failed[0].reason ?? "?")")
        }
        let metrics = good.compactMap(\.metric)
        metricMedian = Statistics.median(metrics)
        metricSpread = Statistics.relativeSpread(metrics)
        cpuSecondsMedian = Statistics.median(good.map(\.cpuSeconds))
        if workload.reportsCPUPerRequest, let cpu = cpuSecondsMedian {
            cpuMicrosecondsPerRequest = cpu / Double(workload.count) * 1e6
        }
        peakRSSMiBMedian = Statistics.median(good.map { Double($0.peakRSSKiB) / 1024 })
        serverConnectionsMedian = Statistics.median(good.compactMap { $0.server?.connections })
        elapsedSecondsMedian = Statistics.median(good.compactMap { $0.result?.elapsedSeconds })
        peakActiveConnectionsMedian = Statistics.median(good.compactMap { $0.server?.peakActiveConnections })
        serverAnsweredMedian = Statistics.median(good.compactMap { $0.server?.answered.map(Double.init) })
        let latencies = good.compactMap { $0.result?.latency }
        if !latencies.isEmpty {
            var medians = LatencySummary()
            medians.p50Ms = Statistics.median(latencies.map(\.p50Ms)) ?? 0
            medians.p99Ms = Statistics.median(latencies.map(\.p99Ms)) ?? 0
            medians.p999Ms = Statistics.median(latencies.map(\.p999Ms)) ?? 0
            medians.maxMs = Statistics.median(latencies.map(\.maxMs)) ?? 0
            medians.meanMs = Statistics.median(latencies.map(\.meanMs)) ?? 0
            medians.rate = latencies[0].rate
            medians.samples = latencies[0].samples
            latencyMedians = medians
            achievedRateMedian = Statistics.median(good.compactMap { run in
                run.result.map { Double($0.ok) / max($0.elapsedSeconds, 1e-9) }
            })
        }
        if workload.samplesActiveConnections, let peak = peakActiveConnectionsMedian,
           !Self.allInFlight(peak: peak, count: workload.count) {
            notes.append("at most \(Int(peak)) connections open at once (median): not all \(workload.count) "
                + "transfers were in flight together, so KiB/transfer is not comparable")
        }
        httpVersion = good.compactMap { $0.result?.httpVersion }.first
        for note in Set(good.flatMap(\.notes)).sorted() { notes.append(note) }
        // What the client itself reported (the background agent's CPU time),
        // run by run: the values differ, so they are not merged.
        for (index, run) in runs.enumerated() where run.status == .ok {
            for note in run.result?.notes ?? [] { notes.append("run \(index + 1): \(note)") }
        }
    }

    /// Whether a W7 run had (close to) all of its `count` transfers open at
    /// once, by the most connections nginx saw; the table's note and the
    /// W7 target read it the same way.
    static func allInFlight(peak: Double, count: Int) -> Bool {
        peak >= 0.9 * Double(count)
    }

    mutating func setRatio(baseline: CellSummary?) {
        guard let mine = metricMedian, let theirs = baseline?.metricMedian, theirs > 0 else { return }
        ratioToBaseline = mine / theirs
    }
}
