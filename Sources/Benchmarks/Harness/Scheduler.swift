// The order of runs: per workload, one warm-up round, then the measured
// rounds, clients taking turns in each (`TurnTaking`). A client that reports
// a workload unsupported is not asked again; one that fails twice on it is
// dropped from it.
import Foundation

struct Scheduler {
    let turns: TurnTaking
    let runCounts: RunCounts

    func run(_ workload: Workload) -> WorkloadReport {
        var warmupRecords: [String: [RunRecord]] = [:]
        var measured: [String: [RunRecord]] = [:]
        let warmups = runCounts.warmups(for: workload)
        let runs = runCounts.measured(for: workload)
        turns.take(rounds: warmups + runs) { client, round in
            let warmup = round < warmups
            let label = warmup ? "warmup\(round + 1)" : "run\(round - warmups + 1)"
            let record = turns.runner.run(client, workload, label: label, warmup: warmup)
            if warmup { warmupRecords[client.name, default: []].append(record) }
            else { measured[client.name, default: []].append(record) }
            turns.log(progressLine(record, label: label, workload: workload))
            let failures = (warmupRecords[client.name, default: []] + measured[client.name, default: []])
                .filter { $0.status == .failed }.count
            return record.status != .unsupported && failures < 2
        }
        var cells: [CellSummary] = turns.clients.map { client in
            guard turns.runner.isBuilt(client) else {
                return CellSummary(client: client.name, workload: workload, status: .notBuilt, reason: client.missingHint)
            }
            return CellSummary(
                client: client.name, workload: workload,
                warmups: warmupRecords[client.name, default: []], runs: measured[client.name, default: []])
        }
        let baseline = Self.betterBaseline(of: cells, higherIsBetter: workload.metric.higherIsBetter)
        for index in cells.indices { cells[index].setRatio(baseline: baseline) }
        var report = WorkloadReport(workload: workload, cells: cells, runs: runs)
        report.baseline = baseline?.client
        return report
    }

    /// Of the raw-libcurl baselines that ran, the one with the better median
    /// (ties: the first): a client is compared with the faster loop, not
    /// with whichever the table happens to start with.
    static func betterBaseline(of cells: [CellSummary], higherIsBetter: Bool) -> CellSummary? {
        let candidates = ClientTable.baselines.compactMap { name in
            cells.first { $0.client == name && $0.metricMedian != nil }
        }
        return candidates.reduce(nil) { best, cell in
            guard let best, let bestValue = best.metricMedian, let value = cell.metricMedian else { return best ?? cell }
            return (higherIsBetter ? value > bestValue : value < bestValue) ? cell : best
        }
    }

    private func progressLine(_ record: RunRecord, label: String, workload: Workload) -> String {
        let head = "  \(workload.id) \(label) \(record.client):"
        switch record.status {
        case .ok:
            return "\(head) \(TextFormat.number(record.metric, decimals: workload.metric.decimals)) \(workload.metric.rawValue), "
                + "CPU \(TextFormat.number(record.cpuSeconds, decimals: 2)) s, "
                + "peak RSS \(TextFormat.number(Double(record.peakRSSKiB) / 1024, decimals: 1)) MiB, "
                + "wall \(TextFormat.number(record.wallSeconds, decimals: 2)) s"
                + (record.result?.notes ?? []).map { "; " + $0 }.joined()
        case .unsupported:
            return "\(head) unsupported — \(record.reason ?? "")"
        case .failed:
            return "\(head) FAILED — \(record.reason ?? "")"
        }
    }
}
