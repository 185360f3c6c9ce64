// --soak: one client run for a long time, its resident memory and open
// descriptors sampled from /proc as it goes. Not a speed measurement: both
// curves must stay flat (a leak per request shows as a slope long before
// it shows in a short run).
import Foundation

struct SoakSample: Sendable {
    let seconds: Double
    let rssKiB: Int
    let descriptors: Int
    /// Requests nginx had answered since the phase began (its stub_status
    /// counter, minus the status requests themselves), or nil if unread.
    /// Counted by the server because the concurrent phase's client is killed,
    /// not asked, at the end.
    var requests: Int?
}

struct SoakPhase: Sendable {
    let title: String
    let workload: Workload
    /// Stop the client after this long (it is not expected to finish), or
    /// nil to wait for it to make all its requests.
    let duration: Double?

    /// 1 KiB GETs one after another, `requests` of them.
    static func sequential(requests: Int) -> SoakPhase {
        SoakPhase(
            title: "\(requests) sequential GETs of 1 KiB",
            workload: workload(id: "SOAK-seq", count: requests, concurrency: 1, timeout: Double(requests) / 200 + 120),
            duration: nil)
    }

    /// `concurrency` 1 KiB GETs in flight at once, again and again, for `minutes`.
    static func concurrent(_ concurrency: Int, minutes: Double) -> SoakPhase {
        SoakPhase(
            title: "\(concurrency) GETs of 1 KiB in flight at once, repeated for \(minutes) min",
            workload: workload(id: "SOAK-conc", count: Int.max / 4, concurrency: concurrency, timeout: minutes * 60 + 120),
            duration: minutes * 60)
    }

    private static func workload(id: String, count: Int, concurrency: Int, timeout: Double) -> Workload {
        Workload(
            id: id, group: "SOAK", title: id, fixture: .kib1, tls: false, count: count, concurrency: concurrency,
            postBytes: 0, stream: false, consumeBytesPerSecond: 0, metric: .requestsPerSecond, clientTimeout: timeout)
    }
}

struct SoakResult: Sendable {
    let client: String
    let phase: SoakPhase
    var samples: [SoakSample] = []
    var exitDescription = ""
    var failure: String?

    /// After the first tenth (start-up), the end may exceed the start by a
    /// quarter or 8 MiB of RSS, and by 16 descriptors, or more while the
    /// connection pool fills up to one connection per transfer in flight.
    var isFlat: Bool {
        guard let start = settled, let end = samples.last else { return false }
        return end.rssKiB <= max(start.rssKiB * 5 / 4, start.rssKiB + 8 * 1024)
            && end.descriptors <= max(start.descriptors + 16, phase.workload.concurrency + 64)
    }

    private var settled: SoakSample? {
        guard let last = samples.last else { return nil }
        return samples.first { $0.seconds >= last.seconds / 10 } ?? samples.first
    }

    func render() -> String {
        var lines = ["Soak, \(client): \(phase.title)"]
        if let failure { lines.append("  FAILED: \(failure)") }
        guard !samples.isEmpty else { return lines.joined(separator: "\n") + "\n" }
        lines.append("  seconds    RSS MiB  descriptors     requests")
        let step = max(1, samples.count / 12)
        var shown = Array(stride(from: 0, to: samples.count, by: step).map { samples[$0] })
        if shown.last?.seconds != samples.last?.seconds { shown.append(samples.last!) }
        for sample in shown {
            lines.append(
                String(format: "  %7.0f  %9.1f  %11d", sample.seconds, Double(sample.rssKiB) / 1024, sample.descriptors)
                    + "  " + (sample.requests.map { String(format: "%11d", $0) } ?? "          ?"))
        }
        if let last = samples.last, let requests = last.requests, last.seconds > 0 {
            lines.append(String(format: "  %d requests in %.0f s, %.0f per second", requests, last.seconds, Double(requests) / last.seconds))
        }
        // A slow leak hides inside "flat": growth per request made, after
        // the first tenth, shows it (an hour at 10,000 in flight grew about
        // 9 bytes per request in November 2026, still unexplained).
        if let start = settled, let last = samples.last, let from = start.requests, let to = last.requests, to > from {
            let bytesPerRequest = Double(last.rssKiB - start.rssKiB) * 1024 / Double(to - from)
            lines.append(String(format: "  RSS change after the first tenth: %.1f bytes per request", bytesPerRequest))
        }
        let middle = samples[samples.count / 2]
        let mib = { (sample: SoakSample) in String(format: "%.1f", Double(sample.rssKiB) / 1024) }
        lines.append(
            "  start (after the first tenth) \(settled.map(mib) ?? "?") MiB / \(settled?.descriptors ?? 0) fds, "
                + "middle \(mib(middle)) MiB / \(middle.descriptors) fds, end \(mib(samples.last!)) MiB / \(samples.last!.descriptors) fds: "
                + (isFlat ? "flat" : "GROWING"))
        if !exitDescription.isEmpty { lines.append("  client: \(exitDescription)") }
        return lines.joined(separator: "\n") + "\n"
    }
}

struct SoakRun {
    let runner: ClientRunner
    /// Seconds between samples.
    let interval: Double

    func run(_ client: ClientSpec, _ phase: SoakPhase) -> SoakResult {
        var result = SoakResult(client: client.name, phase: phase)
        let observer = ServerObserver(server: runner.server)
        let before = observer.snapshot()
        var statusRequests = 0
        let stem = runner.prefix.runs + "/\(phase.workload.id)-\(client.name)"
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(
                executable: runner.executablePath(client),
                arguments: runner.arguments(for: phase.workload, location: client.location) + client.extraArguments,
                stdoutPath: stem + ".out", stderrPath: stem + ".err")
        } catch {
            result.failure = String(describing: error)
            return result
        }
        let started = ContinuousClock.now
        let deadline = phase.duration ?? phase.workload.clientTimeout
        while true {
            let elapsed = (ContinuousClock.now - started).seconds
            if let exit = ChildProcess.exitIfEnded(pid) {
                result.exitDescription = exit.description
                if phase.duration != nil || !exit.succeeded { result.failure = "the client ended early: \(exit.description)" }
                return result
            }
            if elapsed >= deadline {
                kill(pid, SIGKILL)
                _ = try? ChildProcess.wait(for: pid, timeout: 10)
                result.exitDescription = "stopped after \(Int(elapsed)) s"
                if phase.duration == nil { result.failure = "the client did not finish in \(Int(deadline)) s" }
                return result
            }
            if var sample = Self.sample(pid, at: elapsed) {
                if let before, let now = observer.snapshot() {
                    statusRequests += 1
                    sample.requests = now.requests - before.requests - statusRequests
                }
                result.samples.append(sample)
            }
            usleep(useconds_t(min(interval, max(0.05, deadline - elapsed)) * 1_000_000))
        }
    }

    /// VmRSS from /proc/PID/status and the entries of /proc/PID/fd.
    private static func sample(_ pid: pid_t, at seconds: Double) -> SoakSample? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
        return SoakSample(seconds: seconds, rssKiB: kib, descriptors: descriptors)
    }
}
