// The text table printed for each workload: rows = clients, columns = the
// metric's median, its ratio to the better raw-libcurl loop (named in the
// header), elapsed, CPU (user+sys), CPU per request, peak RSS, connections
// nginx accepted, requests nginx answered, HTTP version; then notes. W9 (open
// loop) shows latency percentiles and the rate achieved instead.
import Foundation

struct WorkloadReport: Codable, Sendable {
    var id: String
    var group: String
    var title: String
    var metric: MetricKind
    var higherIsBetter: Bool
    var count: Int
    var concurrency: Int
    /// Measured runs per client (--runs times the workload's multiplier).
    var runs: Int
    /// The client the ratios are to: the better of `ClientTable.baselines`
    /// in this workload; nil when neither ran (and in older reports, whose
    /// ratios were to rawcurl-poll).
    var baseline: String?
    var cells: [CellSummary]

    enum CodingKeys: String, CodingKey {
        case id, group, title, metric, count, concurrency, runs, cells, baseline
        case higherIsBetter = "higher_is_better"
    }

    init(workload: Workload, cells: [CellSummary], runs: Int) {
        id = workload.id
        group = workload.group
        title = workload.title
        metric = workload.metric
        higherIsBetter = workload.metric.higherIsBetter
        count = workload.count
        concurrency = workload.concurrency
        self.runs = runs
        self.cells = cells
    }
}

enum ReportTable {
    static func render(_ report: WorkloadReport) -> String {
        let runs = report.runs
        let direction = report.higherIsBetter ? "higher is better" : "lower is better"
        let heading = "\(report.id): \(report.title)   [\(report.metric.rawValue), \(direction); median of \(runs) run\(runs == 1 ? "" : "s")]"
        // The ratio is to the better of the two raw-libcurl loops in this
        // workload, named in the column's header.
        let ratioHeader = "x \(report.baseline ?? "baseline")"
        let latency = report.metric == .latencyP99Milliseconds
        let header = latency
            ? ["client", "p50 ms", "p99 ms", "p99.9 ms", "max ms", ratioHeader, "spread %", "req/s", "CPU s",
               "CPU us/req", "peak RSS MiB", "conns", "served"]
            : ["client", report.metric.rawValue, ratioHeader, "spread %", "elapsed s", "CPU s",
               "CPU us/req", "peak RSS MiB", "conns", "served", "HTTP"]
        var notes: [String] = []
        let rows: [[String]] = report.cells.map { cell in
            guard cell.status == .ok else {
                notes.append("\(cell.client): \(cell.status.rawValue)\(cell.reason.map { " — \($0)" } ?? "")")
                let label = cell.status == .failed ? "FAILED" : "n/a"
                return [cell.client, label] + Array(repeating: "-", count: header.count - 2)
            }
            for note in cell.notes { notes.append("\(cell.client): \(note)") }
            // How far the runs were apart: (max - min) / median. A ratio
            // between two cells whose spreads are wider than their gap
            // says little.
            let spread = TextFormat.number(cell.metricSpread.map { $0 * 100 }, decimals: 0)
            let common = [
                TextFormat.number(cell.cpuSecondsMedian, decimals: 2),
                TextFormat.number(cell.cpuMicrosecondsPerRequest, decimals: 0),
                TextFormat.number(cell.peakRSSMiBMedian, decimals: 1),
                TextFormat.number(cell.serverConnectionsMedian, decimals: 0),
                // Requests nginx answered (its access log), per run.
                TextFormat.number(cell.serverAnsweredMedian, decimals: 0),
            ]
            if latency {
                let medians = cell.latencyMedians
                return [
                    cell.client,
                    TextFormat.number(medians?.p50Ms, decimals: 2),
                    TextFormat.number(medians?.p99Ms, decimals: 2),
                    TextFormat.number(medians?.p999Ms, decimals: 2),
                    TextFormat.number(medians?.maxMs, decimals: 1),
                    TextFormat.ratio(cell.ratioToBaseline),
                    spread,
                    TextFormat.number(cell.achievedRateMedian, decimals: 0),
                ] + common
            }
            return [
                cell.client,
                TextFormat.number(cell.metricMedian, decimals: report.metric.decimals),
                TextFormat.ratio(cell.ratioToBaseline),
                spread,
                TextFormat.number(cell.elapsedSecondsMedian, decimals: 2),
            ] + common + [cell.httpVersion ?? "-"]
        }
        var text = heading + "\n" + TextFormat.table(header: header, rows: rows)
        if !notes.isEmpty {
            text += "\n" + notes.map { "  * " + $0 }.joined(separator: "\n")
        }
        return text + "\n"
    }
}
