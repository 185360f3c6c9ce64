// Starts nginx in the foreground (`daemon off`, master + 1 worker) with the
// generated config, waits until its ports accept, and stops it by PID.
#if canImport(Glibc)
import Glibc
#endif
import Foundation

struct NginxServer {
    let pid: pid_t
    let config: NginxConfig
    let version: String

    var ports: NginxPorts { config.ports }

    /// Generates the config and starts nginx; retries with new ports (at most
    /// 3 times) if a port was taken between picking and binding it.
    static func start(prefix: TemporaryPrefix, certificates: GeneratedCertificates) throws -> NginxServer {
        guard let nginx = ChildProcess.locate("nginx") else {
            throw HarnessError.server("the nginx command was not found (apt-get install nginx-light)")
        }
        let version = (try? ChildProcess.run(nginx, ["-v"], scratchDirectory: prefix.path).output)?
            .trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "nginx version: ", with: "") ?? "unknown"
        var lastError = ""
        for _ in 0..<3 {
            let picked = try LoopbackSocket.freePorts(3)
            let config = NginxConfig(
                prefix: prefix,
                ports: NginxPorts(http: picked[0], https: picked[1], sinkBackend: picked[2]),
                certificates: certificates,
                fileLimit: hardFileLimit()
            )
            try config.write()
            let pid = try ChildProcess.spawn(
                executable: nginx,
                arguments: ["-p", prefix.path + "/", "-c", config.path, "-e", config.errorLog],
                stdoutPath: prefix.logs + "/nginx.stdout",
                stderrPath: prefix.logs + "/nginx.stderr"
            )
            CleanupRegistry.shared.setNginx(pid)
            if waitUntilReady(pid: pid, ports: [picked[0], picked[1], picked[2]]) {
                return NginxServer(pid: pid, config: config, version: version)
            }
            stop(pid: pid)
            CleanupRegistry.shared.setNginx(nil)
            lastError = (try? String(contentsOfFile: config.errorLog, encoding: .utf8)) ?? "no error log"
        }
        throw HarnessError.server("did not start: \(lastError)")
    }

    /// Polls the ports (every 20 ms, at most 10 s); false if nginx exited.
    private static func waitUntilReady(pid: pid_t, ports: [UInt16]) -> Bool {
        for _ in 0..<500 {
            if ChildProcess.exitIfEnded(pid) != nil { return false }
            if ports.allSatisfy({ LoopbackSocket.accepts(port: $0) }) { return true }
            usleep(20_000)
        }
        return false
    }

    /// SIGTERM (fast shutdown of master and worker), up to 5 s; then SIGKILL
    /// to the master and to the worker PIDs it had (read from /proc first).
    static func stop(pid: pid_t) {
        let workers = childPIDs(of: pid)
        guard kill(pid, SIGTERM) == 0 else { return }
        let exit = try? ChildProcess.wait(for: pid, timeout: 5)
        if exit?.timedOut ?? true {
            for worker in workers { kill(worker, SIGKILL) }
        }
    }

    private static func childPIDs(of pid: pid_t) -> [pid_t] {
        let path = "/proc/\(pid)/task/\(pid)/children"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: " ").compactMap { pid_t(String($0).trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    func stop() {
        NginxServer.stop(pid: pid)
        CleanupRegistry.shared.setNginx(nil)
    }

    private static func hardFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 4096 }
        if limit.rlim_max == rlim_t.max { return 65_536 }
        return Int(min(limit.rlim_max, 65_536))
    }
}
