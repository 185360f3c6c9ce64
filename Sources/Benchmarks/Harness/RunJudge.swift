// Decides whether a client run counts, and computes its metric. A run counts
// only if the client exited 0, every request succeeded, nginx's access log
// has a line for every request the client counts as answered, every body
// byte arrived, and — for the POST sink — nginx logged the bodies as received.
import BenchClientSupport
import Foundation

struct RunJudge {
    let workload: Workload

    func judge(_ record: inout RunRecord, exit: ChildExit, stderrPath: String) {
        guard let result = record.result else {
            record.status = .failed
            record.reason = "no result line (\(exit.description))" + Self.stderrTail(stderrPath)
            return
        }
        if let reason = result.unsupported {
            record.status = .unsupported
            record.reason = reason
            return
        }
        if let problem = problem(result, exit: exit, server: record.server) {
            record.status = .failed
            record.reason = problem
            return
        }
        if workload.arrivalRate > 0 && result.latency == nil {
            record.status = .failed
            record.reason = "no latencies reported for the open loop"
            return
        }
        record.status = .ok
        record.metric = metric(result, peakRSSKiB: record.peakRSSKiB)
        if workload.tls, let protocols = record.server?.tlsProtocols, protocols["HTTP/2.0", default: 0] < workload.count {
            let seen = protocols.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
            record.notes.append("nginx saw \(seen)")
        }
    }

    private func problem(_ result: ClientResult, exit: ChildExit, server: ServerObservation?) -> String? {
        if result.ok != workload.count || result.errors > 0 {
            let first = result.firstError.map { ": \($0)" } ?? ""
            return "\(result.ok) of \(workload.count) requests succeeded, \(result.errors) failed\(first)"
        }
        if !exit.succeeded {
            return "client \(exit.description)"
        }
        // Nothing may answer from the client's memory: nginx must have
        // answered at least every request the client counts as answered.
        guard let answered = server?.answered else {
            return "nginx's access log unavailable: cannot verify that the server answered every request"
        }
        if answered < result.ok {
            return "nginx answered \(answered) requests, the client claims \(result.ok)"
        }
        let expected = workload.count * workload.expectedBytesPerRequest
        if result.bytesReceived != expected {
            return "received \(result.bytesReceived) body bytes, expected \(expected)"
        }
        if workload.postBytes > 0 {
            let bodies = workload.count * workload.postBytes
            guard let server else { return "nginx counters unavailable: cannot verify the upload" }
            if server.sinkRequests < workload.count || server.sinkBytesReceived < bodies {
                return "nginx logged \(server.sinkRequests) sink requests with \(server.sinkBytesReceived) bytes, "
                    + "expected \(workload.count) with at least \(bodies)"
            }
        }
        return nil
    }

    private func metric(_ result: ClientResult, peakRSSKiB: Int) -> Double {
        let elapsed = max(result.elapsedSeconds, 1e-9)
        switch workload.metric {
        case .requestsPerSecond:
            return Double(result.ok) / elapsed
        case .megabytesPerSecond:
            let bytes = workload.postBytes > 0 ? result.bytesSent : result.bytesReceived
            return Double(bytes) / elapsed / 1e6
        case .peakRSSMiB:
            return Double(peakRSSKiB) / 1024
        case .kibPerTransfer:
            return Double(max(0, peakRSSKiB - result.rssBeforeKiB)) / Double(workload.count)
        case .latencyP99Milliseconds:
            return result.latency?.p99Ms ?? .infinity
        }
    }

    private static func stderrTail(_ path: String) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), !text.isEmpty else { return "" }
        let tail = text.split(separator: "\n").suffix(3).joined(separator: " | ")
        return "; stderr: " + String(tail.prefix(300))
    }
}
