// --background: the download in a background session. Its transfer runs in
// the transfer agent, a process of its own: `bench-agent` (Clients/Agent, the
// main package's agent program), which SwiftPM builds beside this executable.
//
// Each run has an agent of its own. A fresh 0700 folder becomes
// XDG_RUNTIME_DIR before the session is made (the session reads it then),
// so the session starts a new agent in FOLDER/AsyncURLSession rather than
// reaching the user's. After the run the agent's CPU time and peak RSS
// become the result's note, since the harness's CPU and RSS columns are this
// process's own (`stop` says why the agent's never join them); then the
// agent is stopped and the folder removed.
import AsyncURLSession
import BenchClientSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct BackgroundRun {
    /// The private XDG_RUNTIME_DIR.
    let runtimeFolder: String
    let session: Session

    /// The agent's folder, as the session derives it from XDG_RUNTIME_DIR.
    var agentFolder: String { runtimeFolder + "/AsyncURLSession" }

    /// The agent executable's name, as /proc shows it (comm) too.
    static let agentName = "bench-agent"

    /// Makes the folder and the background session (which starts the agent
    /// at once). On failure prints a failed result line and exits 1.
    static func startOrExit(arguments: ClientArguments, client: String, api: String) -> BackgroundRun {
        func fail(_ reason: String) -> Never {
            var result = ClientResult(client: client, workload: arguments.workload, api: api)
            result.requests = arguments.count
            result.errors = arguments.count
            result.firstError = reason
            result.printAndExit()
        }
        guard let directory = ownDirectory() else { fail("cannot read /proc/self/exe to find \(agentName)") }
        let agent = directory + "/" + agentName
        guard access(agent, X_OK) == 0 else { fail("\(agent) not found: build the benchmarks package") }
        guard let folder = makePrivateFolder() else {
            fail("cannot make a temporary folder: \(String(cString: strerror(errno)))")
        }
        setenv("XDG_RUNTIME_DIR", folder, 1)
        // A safety net, inherited by the agent: one left behind (this process
        // killed by its watchdog or the harness before `stop`) leaves by
        // itself 30 s after its last program went. It never idles while
        // this process holds the session.
        setenv("ASYNCURLSESSION_AGENT_IDLE_EXIT", "30", 1)
        var configuration = SessionConfiguration.background(identifier: "bench-\(getpid())-\(UUID().uuidString)")
        configuration.backgroundAgentPath = agent
        return BackgroundRun(runtimeFolder: folder, session: Session(configuration: configuration))
    }

    /// The agent's CPU time (user+sys) and peak RSS so far, for the
    /// result's notes. (Not summed with this process's: the harness's CPU
    /// column is wait4's, to the end of the process, and /proc counts in
    /// 10 ms ticks; the reader adds the two.)
    func agentNote() -> String {
        guard let pid = agentPID() else {
            return "agent CPU unknown: no \"agent PID serving\" line in \(agentFolder)/agent.log"
        }
        guard let agent = ProcStat.read(pid: pid), agent.command == Self.agentName else {
            return "agent CPU unknown: /proc/\(pid)/stat unreadable or not \(Self.agentName)'s"
        }
        let peak = ProcStat.peakRSSKiB(pid: pid).map { ", peak RSS " + Self.decimals(Double($0) / 1024, 1) + " MiB" } ?? ""
        return "agent CPU " + Self.decimals(agent.cpuSeconds, 2) + " s (user " + Self.decimals(agent.userSeconds, 2)
            + ", sys " + Self.decimals(agent.systemSeconds, 2) + ")" + peak
    }

    /// Stops the agent (SIGTERM) and removes the folder.
    ///
    /// SIGCHLD is ignored first. The agent is this process's child (the
    /// session spawned it) and the library reaps it with waitpid when it
    /// ends; a child reaped before this process exits adds its CPU time and
    /// peak RSS to this process's rusage as the harness reads it (wait4
    /// counts reaped children). With SIGCHLD ignored the kernel reaps it
    /// and adds nothing (the library's waitpid then ends with ECHILD).
    func stop() {
        signal(SIGCHLD, SIG_IGN)
        // Only a process that is our agent: the PID comes from a log file.
        if let pid = agentPID(), ProcStat.read(pid: pid)?.command == Self.agentName {
            kill(pid, SIGTERM)
            if !Self.waitGone(pid, seconds: 5) {
                kill(pid, SIGKILL)
                _ = Self.waitGone(pid, seconds: 1)
            }
        }
        try? FileManager.default.removeItem(atPath: runtimeFolder)
    }

    /// The agent's PID, from the last "agent PID serving" line of its log.
    private func agentPID() -> pid_t? {
        guard let log = try? String(contentsOfFile: agentFolder + "/agent.log", encoding: .utf8) else { return nil }
        var found: pid_t?
        for line in log.split(separator: "\n") where line.contains(" serving ") {
            let words = line.split(separator: " ")
            for index in words.indices.dropLast(2) where words[index] == "agent" && words[index + 2] == "serving" {
                if let pid = pid_t(words[index + 1]), pid > 1 { found = pid }
            }
        }
        return found
    }

    /// Waits, in 10 ms steps, until `pid` no longer exists; false when it
    /// still does after `seconds`.
    private static func waitGone(_ pid: pid_t, seconds: Double) -> Bool {
        for _ in 0..<max(1, Int(seconds * 100)) {
            if kill(pid, 0) != 0, errno == ESRCH { return true }
            usleep(10_000)
        }
        return false
    }

    /// A new folder only this user can enter (mkdtemp makes it 0700).
    private static func makePrivateFolder() -> String? {
        var template = Array((FileManager.default.temporaryDirectory.path + "/bench-agent.XXXXXX").utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let start = buffer.baseAddress, let made = mkdtemp(start) else { return nil }
            return String(cString: made)
        }
    }

    /// The folder of this executable (/proc/self/exe), where SwiftPM puts bench-agent too.
    private static func ownDirectory() -> String? {
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        return URL(fileURLWithPath: path).deletingLastPathComponent().path
    }

    private static func decimals(_ value: Double, _ places: Int) -> String {
        String(format: "%.\(places)f", value)
    }
}

/// A process's CPU time and name from /proc/PID/stat (proc(5)).
struct ProcStat {
    var command: String
    var userSeconds: Double
    var systemSeconds: Double

    var cpuSeconds: Double { userSeconds + systemSeconds }

    /// nil when the file cannot be read or parsed.
    static func read(pid: pid_t) -> ProcStat? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close
        else { return nil }
        // The name may hold spaces and parentheses: the fields start after the
        // last ")", with the state (field 3); utime and stime are fields 14
        // and 15, in clock ticks.
        let fields = text[text.index(after: close)...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard fields.count > 12, ticks > 0, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return ProcStat(
            command: String(text[text.index(after: open)..<close]),
            userSeconds: user / ticks, systemSeconds: system / ticks)
    }

    /// VmHWM (peak resident set) of `pid` in KiB, nil when unreadable.
    static func peakRSSKiB(pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(String(line.dropFirst("VmHWM:".count).filter(\.isNumber)))
        }
        return nil
    }
}
