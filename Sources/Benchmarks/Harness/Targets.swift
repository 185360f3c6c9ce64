// The targets of the benchmark issue, judged against the run they come from:
// for each of our clients, its median against the target, met or missed, and
// by how much. Ratios are to raw libcurl in the same run, as in the tables, so
// a verdict never mixes two runs of a noisy machine.
import Foundation

/// One target: a workload (or all cells of a group), what is compared, and
/// the limit.
struct Target: Sendable {
    enum Measure: Sendable {
        /// The cell's metric over the baseline's, at least `limit`.
        case ratioAtLeast
        /// The cell's peak RSS in MiB, at most `limit`.
        case peakRSSAtMost
        /// The cell's KiB per transfer minus the baseline's, at most `limit`.
        case kibPerTransferAboveBaselineAtMost
        /// The cell's CPU per request over the baseline's, at most `limit`.
        case cpuPerRequestRatioAtMost
        /// The cell's metric over the peer's (`Target.peer`) in the same
        /// run, at least `limit`.
        case ratioToPeerAtLeast
        /// The cell's CPU over the peer's for the same requests, at most `limit`.
        case cpuRatioToPeerAtMost

        /// Whether `limit` is a ceiling (else a floor).
        var isUpperLimit: Bool { self != .ratioAtLeast && self != .ratioToPeerAtLeast }
    }

    /// A workload id ("W1-c64") or group ("W1": every W1 cell).
    let workload: String
    let measure: Measure
    let limit: Double
    /// How the issue states it.
    let text: String
    /// The client a peer measure compares with.
    var peer: String? = nil

    func applies(to report: WorkloadReport) -> Bool {
        report.id == workload || report.group == workload
    }

    /// The issue's targets, in its order.
    static let all: [Target] = [
        Target(workload: "W1-c64", measure: .ratioAtLeast, limit: 0.8, text: "W1-c64 req/s >= 0.8x raw libcurl"),
        Target(workload: "W1-c1", measure: .ratioAtLeast, limit: 0.7, text: "W1-c1 req/s >= 0.7x raw libcurl"),
        Target(workload: "W2", measure: .ratioAtLeast, limit: 0.9, text: "W2 MB/s >= 0.9x raw libcurl"),
        Target(workload: "W2", measure: .peakRSSAtMost, limit: 32, text: "W2 peak RSS <= 32 MiB"),
        Target(workload: "W3", measure: .ratioAtLeast, limit: 0.9, text: "W3 MB/s >= 0.9x raw libcurl"),
        Target(workload: "W4", measure: .ratioAtLeast, limit: 0.9, text: "W4 MB/s >= 0.9x raw libcurl"),
        Target(workload: "W5", measure: .ratioAtLeast, limit: 0.8, text: "W5 req/s >= 0.8x raw libcurl"),
        Target(workload: "W6", measure: .peakRSSAtMost, limit: 32, text: "W6 peak RSS <= 32 MiB"),
        Target(
            workload: "W7", measure: .kibPerTransferAboveBaselineAtMost, limit: 16,
            text: "W7 <= 16 KiB per transfer beyond raw libcurl's, all complete"),
        Target(workload: "W1", measure: .cpuPerRequestRatioAtMost, limit: 1.5, text: "W1 CPU per request <= 1.5x raw libcurl"),
    ] + issue57

    /// Issue 57's, against the better of the two raw loops: small GETs at
    /// 16 and 64 at once at 0.6x for at most 2.5x the CPU, HTTP/2 at 0.85x,
    /// and uploads ahead of AsyncHTTPClient for no more of its CPU.
    static let issue57: [Target] = [
        Target(workload: "W1-c16", measure: .ratioAtLeast, limit: 0.6, text: "W1-c16 req/s >= 0.6x raw libcurl"),
        Target(workload: "W1-c64", measure: .ratioAtLeast, limit: 0.6, text: "W1-c64 req/s >= 0.6x raw libcurl"),
        Target(workload: "W1-c16", measure: .cpuPerRequestRatioAtMost, limit: 2.5, text: "W1-c16 CPU per request <= 2.5x raw libcurl"),
        Target(workload: "W1-c64", measure: .cpuPerRequestRatioAtMost, limit: 2.5, text: "W1-c64 CPU per request <= 2.5x raw libcurl"),
        Target(workload: "W5", measure: .ratioAtLeast, limit: 0.85, text: "W5 req/s >= 0.85x raw libcurl"),
        Target(workload: "W4", measure: .ratioToPeerAtLeast, limit: 1, text: "W4 MB/s >= AsyncHTTPClient's", peer: "ahc"),
        Target(workload: "W4", measure: .cpuRatioToPeerAtMost, limit: 1, text: "W4 CPU <= AsyncHTTPClient's", peer: "ahc"),
    ]
}

/// One target against one client's cell.
struct TargetVerdict: Codable, Sendable {
    enum Outcome: String, Codable, Sendable {
        case met
        case missed
        /// The cell did not run, failed, or the target does not apply to
        /// the client's API (see `note`).
        case notJudged = "not judged"
    }

    var target: String
    var workload: String
    var client: String
    var value: Double?
    var limit: Double
    var outcome: Outcome
    /// How far from the limit, in the value's unit (positive: past it in the
    /// good direction).
    var margin: Double?
    var note: String?
}

enum TargetJudge {
    /// Clients the targets are about: ours, not the baseline, the peers or
    /// the other references.
    static func isJudged(_ client: String) -> Bool {
        !ClientTable.baselines.contains(client) && !ClientTable.peers.contains(client)
            && !ClientTable.references.contains(client)
    }

    static func judge(_ reports: [WorkloadReport]) -> [TargetVerdict] {
        var verdicts: [TargetVerdict] = []
        for target in Target.all {
            for report in reports where target.applies(to: report) {
                let baselineName = report.baseline ?? ClientTable.baseline
                let baseline = report.cells.first { $0.client == baselineName }
                let peer = target.peer.flatMap { name in report.cells.first { $0.client == name && $0.status == .ok } }
                for cell in report.cells where isJudged(cell.client) {
                    verdicts.append(verdict(target, report: report, cell: cell, baseline: baseline, peer: peer))
                }
            }
        }
        return verdicts
    }

    private static func verdict(
        _ target: Target, report: WorkloadReport, cell: CellSummary, baseline: CellSummary?, peer: CellSummary?
    ) -> TargetVerdict {
        var verdict = TargetVerdict(
            target: target.text, workload: report.id, client: cell.client, value: nil, limit: target.limit,
            outcome: .notJudged)
        guard cell.status == .ok else {
            verdict.note = "\(cell.status.rawValue)\(cell.reason.map { ": \($0)" } ?? "")"
            return verdict
        }
        if target.measure == .peakRSSAtMost, ClientTable.collectsWholeBody.contains(cell.client) {
            verdict.value = cell.peakRSSMiBMedian
            verdict.note = "returns the whole body in one Data by design; the streaming APIs are the ones to judge"
            return verdict
        }
        if target.measure == .kibPerTransferAboveBaselineAtMost, let peak = cell.peakActiveConnectionsMedian,
            !CellSummary.allInFlight(peak: peak, count: report.count)
        {
            verdict.outcome = .missed
            verdict.note = "at most \(Int(peak)) of \(report.count) transfers were in flight at once"
            return verdict
        }
        let value: Double?
        switch target.measure {
        case .ratioAtLeast:
            value = cell.ratioToBaseline
        case .peakRSSAtMost:
            value = cell.peakRSSMiBMedian
        case .kibPerTransferAboveBaselineAtMost:
            value = both(cell.metricMedian, baseline?.metricMedian).map { $0 - $1 }
        case .cpuPerRequestRatioAtMost:
            value = both(cell.cpuMicrosecondsPerRequest, baseline?.cpuMicrosecondsPerRequest).flatMap {
                $1 > 0 ? $0 / $1 : nil
            }
        case .ratioToPeerAtLeast:
            value = both(cell.metricMedian, peer?.metricMedian).flatMap { $1 > 0 ? $0 / $1 : nil }
        case .cpuRatioToPeerAtMost:
            // The same workload, so the same number of requests: CPU seconds compare as CPU per request.
            value = both(cell.cpuSecondsMedian, peer?.cpuSecondsMedian).flatMap { $1 > 0 ? $0 / $1 : nil }
        }
        guard let value else {
            let other = target.peer ?? report.baseline ?? ClientTable.baselines.joined(separator: " or ")
            verdict.note = "no \(other) figure in this run to compare with"
            return verdict
        }
        let margin = target.measure.isUpperLimit ? target.limit - value : value - target.limit
        verdict.value = value
        verdict.margin = margin
        verdict.outcome = margin >= 0 ? .met : .missed
        return verdict
    }

    private static func both(_ first: Double?, _ second: Double?) -> (Double, Double)? {
        guard let first, let second else { return nil }
        return (first, second)
    }

    /// The verdicts as a text table, one row per target and client.
    /// `caveat`: printed under the heading (a smoke run's counts are too
    /// small for the verdicts to mean anything).
    static func render(_ verdicts: [TargetVerdict], caveat: String? = nil) -> String {
        guard !verdicts.isEmpty else { return "" }
        let header = ["target", "cell", "client", "value", "limit", "verdict"]
        var notes: [String] = []
        let rows = verdicts.map { verdict -> [String] in
            if let note = verdict.note { notes.append("\(verdict.workload) \(verdict.client): \(note)") }
            let outcome: String
            switch verdict.outcome {
            case .met: outcome = "met"
            case .missed: outcome = verdict.margin.map { "MISSED by " + TextFormat.number(abs($0), decimals: 3) } ?? "MISSED"
            case .notJudged: outcome = "-"
            }
            return [
                verdict.target, verdict.workload, verdict.client,
                TextFormat.number(verdict.value, decimals: 3), TextFormat.number(verdict.limit, decimals: 2), outcome,
            ]
        }
        let met = verdicts.filter { $0.outcome == .met }.count
        let missed = verdicts.filter { $0.outcome == .missed }.count
        var text = "Targets against this run: \(met) met, \(missed) missed\n"
            + (caveat.map { $0 + "\n" } ?? "")
            + TextFormat.table(header: header, rows: rows)
        if !notes.isEmpty {
            text += "\n" + notes.map { "  * " + $0 }.joined(separator: "\n")
        }
        return text + "\n"
    }
}
