// --count: what one small GET costs in heap allocations, lock acquisitions
// and context switches, per client, one at a time and 16 and 64 at once.
//
// The W1 request (1 KiB from nginx's /files/, HTTP/1.1), `requests` of them
// per run after `warmupRequests` that are not counted, inside the same
// client process (`--count-warmup`, ClientSupport/CountWindow.swift). Each
// run is a process of its own, its allocations counted by malloc-interposer's
// library, preloaded (LD_PRELOAD) from beside the executables. Our lock
// acquisitions are counted only in the count build
// (-DASYNCURLSESSION_COUNTING_LOCKS); see README, "Allocations and locks per
// small GET".
import BenchClientSupport
import Foundation

struct CountRun {
    let turns: TurnTaking
    let runs: Int
    let requests: Int
    let warmupRequests: Int
    /// malloc-interposer's library, or nil when it was not built.
    let interposer: String?

    /// The concurrencies counted: one at a time, 16 and 64 at once.
    static let concurrencies = [1, 16, 64]

    /// Whether this harness (and so every client built with it) is the count
    /// build, whose locks count their acquisitions.
    static var isCountingBuild: Bool {
        #if ASYNCURLSESSION_COUNTING_LOCKS
        return true
        #else
        return false
        #endif
    }

    /// The library the clients get preloaded, if it is beside them.
    static func interposerLibrary(in directory: String) -> String? {
        let path = directory + "/libMallocInterposerSwift.so"
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    func workload(concurrency: Int) -> Workload {
        Workload(
            id: "COUNT-c\(concurrency)", group: "COUNT",
            title: "\(requests) GETs of 1 KiB, \(concurrency == 1 ? "one at a time" : "\(concurrency) at once"), HTTP/1.1",
            fixture: .kib1, tls: false, count: requests, concurrency: concurrency, postBytes: 0, stream: false,
            consumeBytesPerSecond: 0, metric: .requestsPerSecond,
            clientTimeout: Double(requests + warmupRequests) / 500 + 60)
    }

    /// Every client, `runs` times, taking turns (a failed one sits out the
    /// rest); one cell per client.
    func run(concurrency: Int) -> CountReport {
        let workload = workload(concurrency: concurrency)
        var environment = ProcessInfo.processInfo.environment
        if let interposer { environment["LD_PRELOAD"] = interposer }
        var counted: [String: [CountedWork]] = [:]
        var failures: [String: String] = [:]
        turns.take(rounds: runs) { client, index in
            let round = index + 1
            var spec = client
            spec.extraArguments += ["--count-warmup", String(warmupRequests)]
            let record = turns.runner.run(spec, workload, label: "count\(round)", warmup: false, environment: environment)
            guard record.status == .ok, let counts = record.result?.counts else {
                failures[client.name] = record.reason ?? "no counts in the result line"
                turns.log("  \(workload.id) run \(round) \(client.name): FAILED — \(failures[client.name] ?? "")")
                return false
            }
            counted[client.name, default: []].append(counts)
            turns.log("  \(workload.id) run \(round) \(client.name): \(CountCell.summary(counts))")
            return true
        }
        let cells = turns.clients.map { client in
            CountCell(
                client: client.name, runs: counted[client.name, default: []],
                failure: turns.runner.isBuilt(client) ? failures[client.name] : client.missingHint)
        }
        return CountReport(
            id: workload.id, title: workload.title, concurrency: concurrency, requests: requests,
            warmupRequests: warmupRequests, cells: cells)
    }
}

/// One client's counted runs at one concurrency.
struct CountCell: Codable, Sendable {
    var client: String
    var runs: [CountedWork]
    var failure: String?

    /// The median over the runs of a count divided by the run's requests.
    func perRequest(_ value: (CountedWork) -> Double?) -> Double? {
        let values = runs.compactMap { run in value(run).map { $0 / Double(max(1, run.requests)) } }
        return values.count == runs.count ? Statistics.median(values) : nil
    }

    var allocations: Double? { perRequest { $0.allocations.map(Double.init) } }
    var allocatedBytes: Double? { perRequest { $0.allocatedBytes.map(Double.init) } }
    var locks: Double? { perRequest { $0.lockAcquisitions.map(Double.init) } }
    var voluntarySwitches: Double? { perRequest { Double($0.voluntarySwitches) } }
    var involuntarySwitches: Double? { perRequest { Double($0.involuntarySwitches) } }
    var switches: Double? { perRequest { Double($0.voluntarySwitches + $0.involuntarySwitches) } }
    var cpuMicroseconds: Double? { perRequest { $0.cpuSeconds * 1e6 } }
    var threads: Double? { Statistics.median(runs.map(\.threads)) }

    /// One run's counts per request, for the progress line.
    static func summary(_ counts: CountedWork) -> String {
        let requests = Double(max(1, counts.requests))
        func per(_ value: Int?) -> String { TextFormat.number(value.map { Double($0) / requests }, decimals: 1) }
        return "\(per(counts.allocations)) allocations, \(per(counts.lockAcquisitions)) locks, "
            + "\(per(counts.voluntarySwitches + counts.involuntarySwitches)) context switches per request"
    }
}

/// Every client's counts at one concurrency.
struct CountReport: Codable, Sendable {
    var id: String
    var title: String
    var concurrency: Int
    var requests: Int
    var warmupRequests: Int
    var cells: [CountCell]

    enum CodingKeys: String, CodingKey {
        case id, title, concurrency, requests, cells
        case warmupRequests = "warmup_requests"
    }
}

enum CountTable {
    static func render(_ report: CountReport, runs: Int) -> String {
        let heading = "\(report.title), after \(report.warmupRequests) not counted"
            + "   [per request; median of \(runs) run\(runs == 1 ? "" : "s")]"
        let header = [
            "client", "allocations", "bytes allocated", "lock acquisitions", "context switches",
            "(voluntary", "involuntary)", "CPU us", "threads",
        ]
        var notes: [String] = []
        let rows: [[String]] = report.cells.map { cell in
            if let failure = cell.failure {
                notes.append("\(cell.client): \(failure)")
                return [cell.client, "FAILED"] + Array(repeating: "-", count: header.count - 2)
            }
            return [
                cell.client,
                TextFormat.number(cell.allocations, decimals: 1),
                TextFormat.number(cell.allocatedBytes, decimals: 0),
                TextFormat.number(cell.locks, decimals: 1),
                TextFormat.number(cell.switches, decimals: 2),
                TextFormat.number(cell.voluntarySwitches, decimals: 2),
                TextFormat.number(cell.involuntarySwitches, decimals: 2),
                TextFormat.number(cell.cpuMicroseconds, decimals: 1),
                TextFormat.number(cell.threads, decimals: 0),
            ]
        }
        var text = heading + "\n" + TextFormat.table(header: header, rows: rows)
        if !notes.isEmpty {
            text += "\n" + notes.map { "  * " + $0 }.joined(separator: "\n")
        }
        return text + "\n"
    }

    /// Where a column shows "-" and why, once under the tables.
    static func legend(interposer: String?) -> String {
        var lines = [
            "Lock acquisitions: our locks (every Mutex of CurlEngine, AsyncURLSession, URLSessionCompat),"
                + " for our clients only" + (CountRun.isCountingBuild
                    ? "."
                    : "; this is not the count build, so none are counted: build with"
                        + " -Xswiftc -DASYNCURLSESSION_COUNTING_LOCKS (README)."),
        ]
        if interposer == nil {
            lines.append("Allocations: libMallocInterposerSwift.so is not beside the executables: not counted.")
        }
        return lines.map { "  * " + $0 }.joined(separator: "\n") + "\n"
    }
}
