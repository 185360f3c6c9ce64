// Samples nginx's "Active connections" (stub_status) every 200 ms while a
// client runs, to show how many transfers were really in flight at once (W7).
// Each sample is one request on its own connection; the observation subtracts
// them from the run's counts.
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization

final class ConnectionSampler: Sendable {
    private struct State {
        var stop = false
        var joined = false
        var samples = 0
        var peakActive = 0
    }

    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)

    /// Starts sampling `port`; gives up by itself after `maximumSeconds`.
    init(port: UInt16, maximumSeconds: Double) {
        let iterations = max(1, Int(maximumSeconds / 0.2))
        let thread = Thread { [self] in
            for _ in 0..<iterations {
                if state.withLock({ $0.stop }) { break }
                if let status = LoopbackSocket.get(port: port, path: "/status"),
                   let active = Self.activeConnections(status) {
                    state.withLock {
                        $0.samples += 1
                        // Minus the sampling connection itself.
                        $0.peakActive = max($0.peakActive, active - 1)
                    }
                }
                usleep(200_000)
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops sampling; returns (samples taken, peak active connections).
    /// Calling it again returns the same at once.
    func stop() -> (samples: Int, peakActive: Int) {
        let mustJoin = state.withLock { state in
            defer { state.stop = true; state.joined = true }
            return !state.joined
        }
        if mustJoin { _ = finished.wait(timeout: .now() + 10) }
        return state.withLock { ($0.samples, $0.peakActive) }
    }

    /// "Active connections: 123 \n..." -> 123
    private static func activeConnections(_ status: String) -> Int? {
        guard let first = status.split(separator: "\n").first else { return nil }
        return first.split(separator: " ").compactMap { Int($0) }.first
    }
}
