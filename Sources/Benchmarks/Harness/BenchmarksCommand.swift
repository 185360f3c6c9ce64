// Entry point: swift run -c release --package-path Sources/Benchmarks Benchmarks
//   [--quick] [--runs N] [--warmups N] [--only W1,W5] [--clients a,b] [--json out.json] [--strict]
//   Benchmarks --soak [--soak-requests N] [--soak-minutes M] [--soak-concurrency C] [--soak-interval S]
//   Benchmarks --openapi [--only ...]   (the OpenAPI transports: W1, W3, W4 by default)
//   Benchmarks --background [--quick] [--runs N]   (W8: a background download against a foreground one)
//   Benchmarks --features [--quick] [--runs N]   (W1-c64: cookies, cache, logging each on, beside all off)
//   Benchmarks --count [--quick] [--runs N] [--count-requests N] [--count-warmup W] [--clients ...]
//              (allocations, lock acquisitions, context switches per small GET; CountRun.swift)
//   Benchmarks --judge out.json   (the targets against an earlier run's report)
//
// Sets up a temporary prefix (certificates, files, nginx config), starts nginx
// on 127.0.0.1, runs every workload with every client as separate processes,
// prints a table per workload, then the issue's targets against this run
// (Targets.swift), and writes the JSON report. nginx and the prefix
// are removed at the end, on errors and on Ctrl-C.
//
// --background runs W8 only (one 1 GiB download to a file; 1 MiB with
// --quick), with the baseline and two rows of ours: asyncurlsession-download
// (`session.downloadTask(with:)` in the client process) and
// asyncurlsession-background (the same in a background session: the
// transfer runs in a bench-agent process the session starts, one per run).
// The CPU and peak RSS columns are the client process's only; the agent's
// CPU time and peak RSS are in the background row's notes, run by run. A
// default run never includes W8 (`--only W8` selects it).
//
// --features runs W1-c64 only (or --only's workloads) with the baseline,
// asyncurlsession-data (every feature off) and the same client with one
// feature on each: asyncurlsession-data+cookies (a jar in memory, responses
// from nginx's /cookies/ setting a cookie), +cache (a response cache in
// memory and on disk in a temporary folder, cacheable responses from
// /cached/ that every request still reloads) and +logging (a trace-level
// logger whose handler counts and drops the messages). Each feature client
// checks after its run that the feature did its work, else the run fails.
import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import Foundation

@main
struct BenchmarksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "Benchmarks",
        abstract: "Compare AsyncURLSession with raw libcurl, Foundation's URLSession and AsyncHTTPClient against a local nginx."
    )

    @Flag(help: "Tiny counts, 1 run, no warm-up: a smoke run (well under a minute).")
    var quick = false

    @Option(help: "Measured runs per client and workload (default 3; 1 with --quick).")
    var runs: Int?

    @Option(help: "Warm-up runs per client and workload (default 1; 0 with --quick).")
    var warmups: Int?

    @Option(help: "Only these workloads, comma-separated: W1..W8 or W1-c1, W1-c16, W1-c64 (W8 only when named, or with --background).")
    var only: String?

    @Option(help: "Only these clients, comma-separated (the baselines rawcurl-poll and rawcurl-reuse are always kept); NAME=/abs/path adds an extra executable.")
    var clients: String?

    @Option(help: "Where to write the JSON report (default: benchmark-results.json next to the executables).")
    var json: String?

    @Option(help: "Folder holding the bench-* executables (default: the harness's own folder).")
    var clientsDirectory: String?

    @Flag(help: "Keep the temporary prefix (nginx config, logs, client output) for inspection.")
    var keepPrefix = false

    @Option(help: "Judge the targets against the JSON report of an earlier run and print them; runs nothing.")
    var judge: String?

    @Flag(help: "Exit with status 1 when any client's run failed its checks (CI's smoke run); a missed target is not a failure.")
    var strict = false

    @Flag(help: "Compare the OpenAPI transports instead: one generated client on ours, swift-openapi-urlsession's and swift-openapi-async-http-client's, beside the plain clients under them (W1, W3 and W4 unless --only).")
    var openapi = false

    @Flag(help: "Measure a background session's download against a foreground one: W8 (one 1 GiB download to a file) with the baseline, asyncurlsession-download and asyncurlsession-background; the agent's CPU time is in the notes.")
    var background = false

    @Flag(help: "Measure what the session's features cost when on: W1-c64 (unless --only) with the baseline, asyncurlsession-data, and the same with cookies, a response cache (memory and disk) or trace logging on.")
    var features = false

    @Flag(help: "Count per small GET instead: heap allocations (malloc-interposer, preloaded), our lock acquisitions (count build only) and context switches, one at a time and 16 and 64 at once (README: Allocations and locks per small GET).")
    var count = false

    @Option(help: "--count: counted requests per run (default 10000; 200 with --quick).")
    var countRequests: Int?

    @Option(help: "--count: requests before the counted ones, in the same process (default 1000; 50 with --quick).")
    var countWarmup: Int?

    @Flag(help: "Soak instead of the workloads: sequential GETs, then many in flight for minutes, sampling the client's RSS and descriptors (default client: asyncurlsession-data).")
    var soak = false

    @Option(help: "Soak: sequential requests (default 1000000).")
    var soakRequests = 1_000_000

    @Option(help: "Soak: minutes of the concurrent phase (default 10).")
    var soakMinutes = 10.0

    @Option(help: "Soak: transfers in flight in the concurrent phase (default 10000).")
    var soakConcurrency = 10_000

    @Option(help: "Soak: seconds between samples (default 5).")
    var soakInterval = 5.0

    func validate() throws {
        if let runs, runs < 1 { throw ValidationError("--runs must be at least 1") }
        if let warmups, warmups < 0 { throw ValidationError("--warmups must be 0 or more") }
        if [background, openapi, features, count].filter({ $0 }).count > 1 {
            throw ValidationError("--background, --openapi, --features and --count are separate runs: give one")
        }
        if let countRequests, countRequests < 1 { throw ValidationError("--count-requests must be at least 1") }
        if let countWarmup, countWarmup < 1 { throw ValidationError("--count-warmup must be at least 1") }
    }

    func run() throws {
        if let judge {
            let report = try JSONReport.read(from: judge)
            print(TargetJudge.render(TargetJudge.judge(report.workloads)), terminator: "")
            return
        }
        let started = ContinuousClock.now
        let startedAt = Date()
        let measuredRuns = runs ?? (quick ? 1 : 3)
        let warmupRuns = warmups ?? (quick ? 0 : 1)
        let workloads = try selectedWorkloads()
        let clientSpecs = try selectedClients()
        let directory = clientsDirectory ?? Self.ownDirectory()
        let registry = CleanupRegistry.shared
        registry.installSignalHandlers()

        let prefix = try TemporaryPrefix.create()
        registry.setPrefix(prefix.path, keep: keepPrefix)
        var server: NginxServer?
        defer {
            server?.stop()
            if keepPrefix {
                FileHandle.standardError.write(Data("Prefix kept: \(prefix.path)\n".utf8))
            } else {
                prefix.remove()
            }
            registry.setPrefix(nil, keep: false)
        }

        let rawcurl = directory + "/bench-rawcurl"
        guard access(rawcurl, X_OK) == 0 else {
            throw HarnessError.setup("\(rawcurl) not found: build the package first (swift build -c release)")
        }
        let libcurl = (try? ChildProcess.run(rawcurl, ["--version"], scratchDirectory: prefix.path).output)?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"

        let certificates = try CertificateGenerator.generate(in: prefix.tls)
        try Fixture.createAll(under: prefix.www)
        let nginx = try NginxServer.start(prefix: prefix, certificates: certificates)
        server = nginx

        var machine = MachineInfo.collect(libcurl: libcurl, nginx: nginx.version)
        print(machine.summary)
        let runCounts = RunCounts(measured: measuredRuns, warmups: warmupRuns, warmupsForced: warmups != nil)
        let exceptions = workloads.filter { runCounts.warmups(for: $0) != warmupRuns }
            .map { " (\($0.id): \(runCounts.warmups(for: $0)) warm-up)" }.joined()
        let multiplied = workloads.filter { runCounts.measured(for: $0) != measuredRuns }
            .map { " (\($0.id): \(runCounts.measured(for: $0)))" }.joined()
        if !soak && !count {
            print("Runs: \(warmupRuns) warm-up\(exceptions) + \(measuredRuns) measured\(multiplied) per client and workload,"
                + " clients taking turns; metric medians; ratios are to the better of"
                + " \(ClientTable.baselines.joined(separator: " and ")) in each workload (named in its table).")
        }
        print("nginx: pid \(nginx.pid), http 127.0.0.1:\(nginx.ports.http), https+h2 127.0.0.1:\(nginx.ports.https)\n")
        let runner = ClientRunner(
            executablesDirectory: directory, prefix: prefix, server: nginx, certificates: certificates)
        for client in clientSpecs where !runner.isBuilt(client) {
            print("Client \(client.name): \(client.missingHint)")
        }
        fflush(nil)  // all C streams: keeps the tables in order with stderr progress

        if soak {
            try runSoak(runner: runner, clients: clientSpecs)
            return
        }
        let turns = TurnTaking(
            runner: runner, clients: clientSpecs, log: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
        if count {
            try runCount(turns: turns, directory: directory, measuredRuns: measuredRuns)
            return
        }

        let scheduler = Scheduler(turns: turns, runCounts: runCounts)
        var reports: [WorkloadReport] = []
        for workload in workloads {
            FileHandle.standardError.write(Data("\(workload.id): \(workload.title)\n".utf8))
            let report = scheduler.run(workload)
            reports.append(report)
            print(ReportTable.render(report))
            fflush(nil)  // all C streams: keeps the tables in order with stderr progress
        }

        let verdicts = TargetJudge.judge(reports)
        print(TargetJudge.render(verdicts, caveat: quick ? "(a --quick run: counts too small to judge by)" : nil))
        machine.loadAverageAtEnd = MachineInfo.loadAverage()
        let total = (ContinuousClock.now - started).seconds
        let jsonPath = json ?? directory + "/benchmark-results.json"
        let report = JSONReport(
            machine: machine,
            settings: .init(
                quick: quick, runs: measuredRuns, warmups: warmupRuns, clients: clientSpecs.map(\.name),
                workloads: workloads.map(\.id), baselines: ClientTable.baselines),
            startedAt: startedAt, totalWallSeconds: total, workloads: reports, targets: verdicts)
        try report.write(to: jsonPath)
        print("Load average (1 min) at end: \(TextFormat.number(machine.loadAverageAtEnd, decimals: 2))")
        print("Total wall time: \(TextFormat.number(total, decimals: 1)) s")
        print("JSON report: \(jsonPath)")
        if strict {
            let failed = reports.flatMap { report in
                report.cells.compactMap { cell in
                    (cell.warmups + cell.runs).first { $0.status == .failed }
                        .map { "\(report.id) \(cell.client): \($0.reason ?? "failed")" }
                }
            }
            if !failed.isEmpty {
                throw HarnessError.failedRuns(failed)
            }
        }
    }

    private func selectedWorkloads() throws -> [Workload] {
        let all = Workload.all(quick: quick)
        guard let only else {
            if openapi { return all.filter { workload in ClientTable.openAPIWorkloads.contains { workload.matches($0) } } }
            if features { return all.filter { workload in ClientTable.featureWorkloads.contains { workload.matches($0) } } }
            let backgroundOnly = all.filter { workload in ClientTable.backgroundWorkloads.contains { workload.matches($0) } }
            // A default run leaves out --background's workload (only named, it runs).
            return background ? backgroundOnly : all.filter { workload in !backgroundOnly.contains { $0.id == workload.id } }
        }
        let filters = only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for filter in filters where !all.contains(where: { $0.matches(filter) }) {
            throw ValidationError("unknown workload \(filter); known: \(all.map(\.id).joined(separator: ", "))")
        }
        return all.filter { workload in filters.contains { workload.matches($0) } }
    }

    /// --soak: each client (not the baseline) through both phases.
    private func runSoak(runner: ClientRunner, clients: [ClientSpec]) throws {
        let soakClients = self.clients == nil
            ? ClientTable.all.filter { $0.name == "asyncurlsession-data" }
            : clients.filter { !ClientTable.baselines.contains($0.name) }
        let phases = [
            SoakPhase.sequential(requests: soakRequests),
            SoakPhase.concurrent(soakConcurrency, minutes: soakMinutes),
        ]
        let soakRun = SoakRun(runner: runner, interval: soakInterval)
        var failed = false
        for client in soakClients {
            for phase in phases {
                FileHandle.standardError.write(Data("soak: \(client.name): \(phase.title)\n".utf8))
                let result = soakRun.run(client, phase)
                print(result.render())
                fflush(nil)
                failed = failed || result.failure != nil || !result.isFlat
            }
        }
        if strict, failed { throw ExitCode(1) }
    }

    /// --count: every client at each concurrency, tables per concurrency.
    private func runCount(turns: TurnTaking, directory: String, measuredRuns: Int) throws {
        let interposer = CountRun.interposerLibrary(in: directory)
        let countRun = CountRun(
            turns: turns, runs: measuredRuns,
            requests: countRequests ?? (quick ? 200 : 10_000), warmupRequests: countWarmup ?? (quick ? 50 : 1_000),
            interposer: interposer)
        print("Count build (our locks counted): \(CountRun.isCountingBuild ? "yes" : "no");"
            + " allocations: \(interposer ?? "not counted")\n")
        var reports: [CountReport] = []
        for concurrency in CountRun.concurrencies {
            let report = countRun.run(concurrency: concurrency)
            reports.append(report)
            print(CountTable.render(report, runs: measuredRuns))
            fflush(nil)
        }
        print(CountTable.legend(interposer: interposer))
        let jsonPath = json ?? directory + "/count-results.json"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(reports).write(to: URL(fileURLWithPath: jsonPath))
        print("JSON report: \(jsonPath)")
        let failed = reports.flatMap { report in report.cells.compactMap { cell in cell.failure.map { "\(report.id) \(cell.client): \($0)" } } }
        if strict, !failed.isEmpty { throw HarnessError.failedRuns(failed) }
    }

    private func selectedClients() throws -> [ClientSpec] {
        if count, clients == nil {
            return ClientTable.all.filter { ClientTable.counted.contains($0.name) }
        }
        if openapi, clients == nil {
            return ClientTable.all.filter { ClientTable.baselines.contains($0.name) || ClientTable.openAPIReferences.contains($0.name) }
                + ClientTable.openAPI
        }
        if background, clients == nil {
            return ClientTable.all.filter { ClientTable.baselines.contains($0.name) } + ClientTable.background
        }
        if features, clients == nil {
            return ClientTable.all.filter { (ClientTable.baselines + [ClientTable.featuresReference]).contains($0.name) }
                + ClientTable.features
        }
        guard let clients else { return ClientTable.all }
        let entries = clients.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        // NAME=/path/to/executable adds an extra client, e.g. an older build of
        // ours, so old and new take turns against the same nginx.
        let extras = entries.compactMap(ClientTable.extra(from:))
        let names = Set(entries.filter { !$0.contains("=") })
        for name in names where !ClientTable.known.contains(where: { $0.name == name }) {
            throw ValidationError("unknown client \(name); known: \(ClientTable.known.map(\.name).joined(separator: ", "))")
        }
        return ClientTable.known.filter { names.contains($0.name) || ClientTable.baselines.contains($0.name) } + extras
    }

    /// The folder of this executable (/proc/self/exe), where SwiftPM puts the
    /// client executables too.
    private static func ownDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else {
            return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
        }
        let path = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return URL(fileURLWithPath: path).deletingLastPathComponent().path
    }
}
