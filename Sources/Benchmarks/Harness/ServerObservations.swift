// What nginx saw during one client run, from the server side: accepted
// connections and requests (stub_status deltas), the requests it answered
// (lines of logs/access.log), bytes the POST sink really received
// ($request_length in logs/sink.log) and the protocol of each TLS request
// (logs/tls.log). Used to verify the clients' own counts.
#if canImport(Glibc)
import Glibc
#endif
import Foundation

struct ServerSnapshot {
    /// Connections open at the time, the status request's own included.
    var active: Int
    var accepts: Int
    var requests: Int
    var sinkLogOffset: UInt64
    var tlsLogOffset: UInt64
    var accessLogOffset: UInt64
}

struct ServerObservation: Codable, Sendable {
    /// Connections nginx accepted during the run (proxy hops for /sink included).
    var connections: Int
    /// Requests nginx handled (HTTP/2 streams count one each; /sink counts two:
    /// the client's and the internal hop).
    var requests: Int
    /// POST sink: requests logged and bytes received (request line, headers, body).
    var sinkRequests: Int
    var sinkBytesReceived: Int
    /// TLS server: requests by protocol, e.g. ["HTTP/2.0": 20000].
    var tlsProtocols: [String: Int]
    /// Most client connections open at once (sampled every 200 ms; W7 only).
    var peakActiveConnections: Int?
    /// Requests nginx answered to the client, one access-log line each
    /// (status requests and the sink's internal hop not among them); nil
    /// in reports written before it was counted.
    var answered: Int?

    enum CodingKeys: String, CodingKey {
        case connections, requests
        case sinkRequests = "sink_requests"
        case sinkBytesReceived = "sink_bytes_received"
        case tlsProtocols = "tls_protocols"
        case peakActiveConnections = "peak_active_connections"
        case answered
    }
}

struct ServerObserver {
    let server: NginxServer

    func snapshot() -> ServerSnapshot? {
        guard let status = LoopbackSocket.get(port: server.ports.http, path: "/status") else { return nil }
        // "Active connections: 1 \nserver accepts handled requests\n 7 7 8 \n..."
        let lines = status.split(separator: "\n")
        guard lines.count >= 3 else { return nil }
        let numbers = lines[2].split(separator: " ").compactMap { Int($0) }
        guard numbers.count == 3,
              let active = lines[0].split(separator: " ").compactMap({ Int($0) }).first
        else { return nil }
        return ServerSnapshot(
            active: active, accepts: numbers[0], requests: numbers[2],
            sinkLogOffset: Self.size(of: server.config.sinkLog),
            tlsLogOffset: Self.size(of: server.config.tlsLog),
            accessLogOffset: Self.size(of: server.config.accessLog)
        )
    }

    /// The difference between two snapshots, minus the status requests made
    /// meanwhile (the closing snapshot and `samples` from a ConnectionSampler).
    /// `claimed`: the requests the client says were answered; the access log
    /// is read until it has as many lines or its buffer has surely been
    /// written.
    func observation(
        from before: ServerSnapshot, to after: ServerSnapshot, samples: Int = 0, peakActive: Int? = nil,
        claimed: Int = 0
    ) -> ServerObservation {
        let sinkLines = Self.lines(of: server.config.sinkLog, from: before.sinkLogOffset, to: after.sinkLogOffset)
        var sinkBytes = 0
        for line in sinkLines {
            sinkBytes += Int(line.split(separator: " ").first ?? "") ?? 0
        }
        var protocols: [String: Int] = [:]
        for line in Self.lines(of: server.config.tlsLog, from: before.tlsLogOffset, to: after.tlsLogOffset) {
            protocols[String(line.split(separator: " ").first ?? "?"), default: 0] += 1
        }
        return ServerObservation(
            connections: after.accepts - before.accepts - 1 - samples,
            requests: after.requests - before.requests - 1 - samples,
            sinkRequests: sinkLines.count,
            sinkBytesReceived: sinkBytes,
            tlsProtocols: protocols,
            // Connections already open before the run (e.g. the sink's idle
            // upstream keepalive connections) are not the client's.
            peakActiveConnections: peakActive.map { max(0, $0 - (before.active - 1)) },
            answered: answeredRequests(since: before.accessLogOffset, claimed: claimed)
        )
    }

    /// Lines of the access log after `offset`. nginx writes its buffer at
    /// the latest 50 ms after a line enters it (`NginxConfig`), so the log
    /// is read every 25 ms, for at least 75 ms after the client ended (its
    /// last lines written: the count is exact, and none is left to land in
    /// the next run's), until it holds `claimed` lines or has not grown for
    /// 250 ms: at most 1 s (a failing run's count is final by then).
    private func answeredRequests(since offset: UInt64, claimed: Int) -> Int {
        var lines = 0
        var lastSize: UInt64 = 0
        var unchangedFor = 0
        for round in 0..<40 {
            let size = Self.size(of: server.config.accessLog)
            if size != lastSize {
                lines = Self.newlines(in: server.config.accessLog, from: offset, to: size)
                lastSize = size
                unchangedFor = 0
            } else {
                unchangedFor += 1
            }
            if (round >= 3 && lines >= claimed) || unchangedFor >= 10 { break }
            usleep(25_000)
        }
        return lines
    }

    private static func size(of path: String) -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.uint64Value ?? 0
    }

    private static func newlines(in path: String, from start: UInt64, to end: UInt64) -> Int {
        guard end > start, let handle = FileHandle(forReadingAtPath: path) else { return 0 }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: start)) != nil,
              let data = try? handle.read(upToCount: Int(end - start))
        else { return 0 }
        return data.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    }

    private static func lines(of path: String, from start: UInt64, to end: UInt64) -> [Substring] {
        guard end > start, let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: start)) != nil,
              let data = try? handle.read(upToCount: Int(end - start))
        else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n")
    }
}
