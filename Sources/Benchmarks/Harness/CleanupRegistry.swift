// Best-effort cleanup on Ctrl-C / SIGTERM / SIGHUP: kill the running client,
// stop nginx, remove the temporary prefix — each by what we recorded (PIDs we
// started, the folder we created), never by name.
//
// The three signals are blocked in every thread and taken by one thread with
// sigwait, so the cleanup runs as ordinary code, not in a signal handler.
// Children get default dispositions and an empty mask (see ChildProcess).
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

final class CleanupRegistry: Sendable {
    static let shared = CleanupRegistry()

    private struct State {
        var clientPID: pid_t?
        var nginxPID: pid_t?
        var prefix: String?
        var keepPrefix = false
        var shuttingDown = false
    }

    private let state = Mutex(State())

    /// Records the running client; one started after a signal arrived is killed at once.
    func setClient(_ pid: pid_t?) {
        let late = state.withLock { state -> Bool in
            state.clientPID = pid
            return state.shuttingDown
        }
        if late, let pid { kill(pid, SIGKILL) }
    }

    func setNginx(_ pid: pid_t?) {
        let late = state.withLock { state -> Bool in
            state.nginxPID = pid
            return state.shuttingDown
        }
        if late, let pid { kill(pid, SIGTERM) }
    }
    func setPrefix(_ path: String?, keep: Bool) {
        state.withLock {
            $0.prefix = path
            $0.keepPrefix = keep
        }
    }

    private static func handledSignals() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&set, signalNumber) }
        return set
    }

    /// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (and so in the
    /// threads it starts afterwards) and starts the thread that waits for them.
    /// Call first thing on the main thread.
    func installSignalHandlers() {
        var set = Self.handledSignals()
        pthread_sigmask(SIG_BLOCK, &set, nil)
        let waiter = Thread { [self] in
            var set = Self.handledSignals()
            var received: Int32 = 0
            // sigwait only fails for an invalid set; a few tries bound it anyway.
            for _ in 0..<3 where sigwait(&set, &received) == 0 {
                emergencyExit(signal: received)
            }
        }
        waiter.start()
    }

    /// Stops what is running, removes the prefix and exits with 128 + signal.
    func emergencyExit(signal signalNumber: Int32) -> Never {
        FileHandle.standardError.write(Data("\nBenchmarks: signal \(signalNumber), cleaning up\n".utf8))
        let snapshot = state.withLock { state in
            state.shuttingDown = true
            return state
        }
        if let pid = snapshot.clientPID { kill(pid, SIGKILL) }
        if let pid = snapshot.nginxPID { NginxServer.stop(pid: pid) }
        if let prefix = snapshot.prefix, !snapshot.keepPrefix {
            try? FileManager.default.removeItem(atPath: prefix)
        }
        exit(128 + signalNumber)
    }
}
