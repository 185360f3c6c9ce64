// Process-level helpers for the clients: file descriptor limit and RSS.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

public enum ProcessLimits {
    /// Raises the soft RLIMIT_NOFILE to the hard limit (W7 opens 10,000 sockets).
    /// Returns the soft limit now in force.
    @discardableResult
    public static func raiseFileDescriptorLimit() -> UInt64 {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(resource, &limit)
            _ = getrlimit(resource, &limit)
        }
        return UInt64(limit.rlim_cur)
    }

    /// Current resident set size in KiB (VmRSS from /proc/self/status), 0 if unknown.
    public static func residentSetKiB() -> Int {
        statusField("VmRSS:")
    }

    /// A number of /proc/self/status, e.g. "Threads:"; 0 if unknown.
    static func statusField(_ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
            return 0
        }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.dropFirst(name.count).filter(\.isNumber)
            return Int(String(digits)) ?? 0
        }
        return 0
    }

    /// Ends the process with a failure line if it is still running after
    /// `arguments.timeoutSeconds` (`--timeout`): every client run is bounded
    /// in time even if a transfer hangs.
    public static func startWatchdog(client: String, arguments: ClientArguments, api: String) {
        let seconds = arguments.timeoutSeconds
        let thread = Thread {
            Thread.sleep(forTimeInterval: seconds)
            var result = ClientResult(client: client, workload: arguments.workload, api: api)
            result.requests = arguments.count
            result.errors = arguments.count
            result.firstError = "client timed out after \(seconds) s"
            result.print()
            exit(3)
        }
        thread.start()
    }
}
