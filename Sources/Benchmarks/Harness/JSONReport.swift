// The whole run as JSON: machine, settings, and per workload the same cells
// as the tables, with every run's raw numbers.
import Foundation

struct JSONReport: Codable, Sendable {
    struct Settings: Codable, Sendable {
        var quick: Bool
        var runs: Int
        var warmups: Int
        var clients: [String]
        var workloads: [String]
        /// Reports before the second baseline: the one client ratios were to.
        var baseline: String?
        /// The clients a workload's ratios may be to: per workload, the better
        /// of them (`WorkloadReport.baseline`).
        var baselines: [String]?

        init(quick: Bool, runs: Int, warmups: Int, clients: [String], workloads: [String], baselines: [String]) {
            self.quick = quick
            self.runs = runs
            self.warmups = warmups
            self.clients = clients
            self.workloads = workloads
            self.baselines = baselines
        }
    }

    var machine: MachineInfo
    var settings: Settings
    var startedAt: Date
    var totalWallSeconds: Double
    var workloads: [WorkloadReport]
    /// The targets judged against this run (absent in reports
    /// written before they were).
    var targets: [TargetVerdict]?

    enum CodingKeys: String, CodingKey {
        case machine, settings, workloads, targets
        case startedAt = "started_at"
        case totalWallSeconds = "total_wall_s"
    }

    /// How ratios that are not finite (a baseline of 0) are spelled, both ways.
    private static let nonFinite = (positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: Self.nonFinite.positiveInfinity, negativeInfinity: Self.nonFinite.negativeInfinity,
            nan: Self.nonFinite.nan)
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }

    static func read(from path: String) throws -> JSONReport {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: Self.nonFinite.positiveInfinity, negativeInfinity: Self.nonFinite.negativeInfinity,
            nan: Self.nonFinite.nan)
        return try decoder.decode(JSONReport.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
