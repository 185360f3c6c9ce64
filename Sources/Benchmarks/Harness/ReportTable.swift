// The text table printed for each workload: rows = clients, columns = the
// metric's median, its ratio to raw libcurl, elapsed, CPU (user+sys), CPU per
// request, peak RSS, connections nginx accepted, HTTP version; then notes.
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
    var cells: [CellSummary]

    enum CodingKeys: String, CodingKey {
        case id, group, title, metric, count, concurrency, runs, cells
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
        let header = [
            "client", report.metric.rawValue, "x \(ClientTable.baseline)", "spread %", "elapsed s", "CPU s",
            "CPU us/req", "peak RSS MiB", "conns", "HTTP",
        ]
        var notes: [String] = []
        let rows: [[String]] = report.cells.map { cell in
            guard cell.status == .ok else {
                notes.append("\(cell.client): \(cell.status.rawValue)\(cell.reason.map { " — \($0)" } ?? "")")
                let label = cell.status == .failed ? "FAILED" : "n/a"
                return [cell.client, label] + Array(repeating: "-", count: header.count - 2)
            }
            for note in cell.notes { notes.append("\(cell.client): \(note)") }
            return [
                cell.client,
                TextFormat.number(cell.metricMedian, decimals: report.metric.decimals),
                TextFormat.ratio(cell.ratioToBaseline),
                // How far the runs were apart: (max - min) / median. A ratio
                // between two cells whose spreads are wider than their gap
                // says little.
                TextFormat.number(cell.metricSpread.map { $0 * 100 }, decimals: 0),
                TextFormat.number(cell.elapsedSecondsMedian, decimals: 2),
                TextFormat.number(cell.cpuSecondsMedian, decimals: 2),
                TextFormat.number(cell.cpuMicrosecondsPerRequest, decimals: 0),
                TextFormat.number(cell.peakRSSMiBMedian, decimals: 1),
                TextFormat.number(cell.serverConnectionsMedian, decimals: 0),
                cell.httpVersion ?? "-",
            ]
        }
        var text = heading + "\n" + TextFormat.table(header: header, rows: rows)
        if !notes.isEmpty {
            text += "\n" + notes.map { "  * " + $0 }.joined(separator: "\n")
        }
        return text + "\n"
    }
}
