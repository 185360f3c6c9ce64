// Runs one client process for one workload: spawn it through bench-launch
// (fork + wait4 → the child's own CPU time and peak RSS), read its JSON line, read what
// nginx saw, and judge the run.
#if canImport(Glibc)
import Glibc
#endif
import BenchClientSupport
import Foundation

enum RunStatus: String, Codable, Sendable {
    case ok
    case unsupported
    case failed
}

/// One client process's run, as measured.
struct RunRecord: Codable, Sendable {
    var client: String
    var workload: String
    var warmup: Bool
    var status: RunStatus
    var reason: String?
    /// The workload's metric for this run (nil unless status is ok).
    var metric: Double?
    var cpuUserSeconds: Double
    var cpuSystemSeconds: Double
    var peakRSSKiB: Int
    /// Process lifetime seen by the harness (start-up included).
    var wallSeconds: Double
    var result: ClientResult?
    var server: ServerObservation?
    /// Remarks that do not fail the run (e.g. the protocol nginx saw).
    var notes: [String] = []

    var cpuSeconds: Double { cpuUserSeconds + cpuSystemSeconds }

    enum CodingKeys: String, CodingKey {
        case client, workload, warmup, status, reason, metric
        case cpuUserSeconds = "cpu_user_s"
        case cpuSystemSeconds = "cpu_sys_s"
        case peakRSSKiB = "peak_rss_kib"
        case wallSeconds = "wall_s"
        case result, server, notes
    }
}

struct ClientRunner {
    let executablesDirectory: String
    let prefix: TemporaryPrefix
    let server: NginxServer
    let certificates: GeneratedCertificates

    func executablePath(_ client: ClientSpec) -> String {
        client.executable.hasPrefix("/") ? client.executable : executablesDirectory + "/" + client.executable
    }

    func isBuilt(_ client: ClientSpec) -> Bool { access(executablePath(client), X_OK) == 0 }

    /// `location`: the client's nginx location in place of /files/ (`ClientSpec.location`).
    func arguments(for workload: Workload, location: String? = nil) -> [String] {
        var arguments = [
            "--workload", workload.id,
            "--url", workload.url(ports: server.ports, location: location),
            "--count", String(workload.count),
            "--concurrency", String(workload.concurrency),
            "--timeout", String(Int(workload.clientTimeout)),
        ]
        if workload.postBytes > 0 { arguments += ["--post-bytes", String(workload.postBytes)] }
        if workload.tls { arguments += ["--cacert", certificates.caCertificate] }
        if workload.stream { arguments.append("--stream") }
        if workload.arrivalRate > 0 {
            arguments += ["--rate", String(Int(workload.arrivalRate)), "--rate-warmup", String(workload.rateWarmup)]
        }
        if workload.consumeBytesPerSecond > 0 {
            arguments += ["--consume-rate", String(Int(workload.consumeBytesPerSecond))]
        }
        return arguments
    }

    /// `environment`: the client's, if not the harness's own.
    func run(
        _ client: ClientSpec, _ workload: Workload, label: String, warmup: Bool,
        environment: [String: String]? = nil
    ) -> RunRecord {
        var record = RunRecord(
            client: client.name, workload: workload.id, warmup: warmup, status: .failed,
            cpuUserSeconds: 0, cpuSystemSeconds: 0, peakRSSKiB: 0, wallSeconds: 0)
        let observer = ServerObserver(server: server)
        let stem = prefix.runs + "/\(workload.id)-\(client.name)-\(label)"
        let before = observer.snapshot()
        let sampler = workload.samplesActiveConnections
            ? ConnectionSampler(port: server.ports.http, maximumSeconds: workload.clientTimeout + 30) : nil
        let started = ContinuousClock.now
        let exit: ChildExit
        defer { _ = sampler?.stop() }
        do {
            exit = try MeasuredLaunch.run(
                launcher: executablesDirectory + "/bench-launch", executable: executablePath(client),
                arguments: arguments(for: workload, location: client.location) + client.extraArguments, timeout: workload.clientTimeout + 15,
                stdoutPath: stem + ".out", stderrPath: stem + ".err", rusagePath: stem + ".rusage",
                environment: environment)
        } catch {
            record.reason = String(describing: error)
            return record
        }
        record.wallSeconds = (ContinuousClock.now - started).seconds
        record.cpuUserSeconds = exit.userSeconds
        record.cpuSystemSeconds = exit.systemSeconds
        record.peakRSSKiB = exit.maxRSSKiB
        let sampled = sampler?.stop()
        record.result = Self.readResult(stdoutPath: stem + ".out")
        if let before, let after = observer.snapshot() {
            record.server = observer.observation(
                from: before, to: after, samples: sampled?.samples ?? 0, peakActive: sampled?.peakActive,
                claimed: record.result?.ok ?? 0)
        }
        RunJudge(workload: workload).judge(&record, exit: exit, stderrPath: stem + ".err")
        return record
    }

    /// The last line of the client's stdout that looks like JSON.
    private static func readResult(stdoutPath: String) -> ClientResult? {
        guard let text = try? String(contentsOfFile: stdoutPath, encoding: .utf8) else { return nil }
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("{") }) else { return nil }
        return try? JSONDecoder().decode(ClientResult.self, from: Data(line.utf8))
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
