// The workloads, at default and --quick sizes.
//
//   W1  20,000 GETs of 1 KiB at concurrency 1, 16, 64 (HTTP/1.1)      req/s
//   W2  one 256 MiB GET, body streamed where the API allows          MB/s, peak RSS
//   W3  2,000 GETs of 1 MiB at concurrency 64                        MB/s
//   W4  500 POSTs of 1 MiB at concurrency 16 to the reading sink     MB/s (sent)
//   W5  W1 at concurrency 64 over HTTPS + HTTP/2                     req/s
//   W6  one 1 GiB GET read by a slow consumer (150 MiB/s, ~7 s)      peak RSS
//   W7  10,000 slow-drip transfers (4,000 B at 1 KiB/s) at once      KiB per transfer
//   W8  one 1 GiB download to a file (Benchmarks --background only)  MB/s
//   W9  1 KiB GETs sent at 5,000 and 20,000 per second (open loop),  p99 ms
//       at most 256 in flight, latency from each intended send time
import Foundation

enum MetricKind: String, Codable, Sendable {
    case requestsPerSecond = "req/s"
    case megabytesPerSecond = "MB/s"
    case peakRSSMiB = "peak RSS MiB"
    case kibPerTransfer = "KiB/transfer"
    /// W9: the 99th percentile of latency from the intended send time.
    case latencyP99Milliseconds = "p99 ms"

    /// Decimals shown in tables.
    var decimals: Int {
        switch self {
        case .requestsPerSecond, .megabytesPerSecond: 0
        case .peakRSSMiB, .kibPerTransfer: 1
        case .latencyP99Milliseconds: 2
        }
    }

    var higherIsBetter: Bool {
        switch self {
        case .requestsPerSecond, .megabytesPerSecond: true
        case .peakRSSMiB, .kibPerTransfer, .latencyP99Milliseconds: false
        }
    }
}

struct Workload: Sendable {
    /// Unique id, e.g. "W1-c16"; `group` is the issue's name, e.g. "W1".
    let id: String
    let group: String
    let title: String
    /// The file to GET, or nil for the POST sink.
    let fixture: Fixture?
    let tls: Bool
    let count: Int
    let concurrency: Int
    let postBytes: Int
    let stream: Bool
    /// Slow consumer: bytes per second (0 = as fast as possible).
    let consumeBytesPerSecond: Double
    let metric: MetricKind
    /// The client's own limit; the harness kills it 30 s later.
    let clientTimeout: Double
    /// Warm-up runs when --warmups is not given; nil = the run's default.
    var defaultWarmups: Int? = nil
    /// Measured runs are this many times --runs. W2 and W4 take a quarter
    /// to half a second per run, and a single client's runs spread 2x
    /// within one table (raw libcurl's W4: 1,791 to 4,161 MB/s), so a
    /// median of 5 moved by a fifth between tables. Three times the runs
    /// add about a minute and a half to a full run.
    var runMultiplier = 1
    /// W9: requests sent at this many per second whatever the answers do
    /// (open loop, `--rate`); 0 for the closed workloads.
    var arrivalRate: Double = 0
    /// W9: requests before the timed ones, closed, not measured (`--rate-warmup`).
    var rateWarmup = 0

    var expectedBytesPerRequest: Int { fixture?.size ?? 0 }
    /// W7: sample nginx's active connections during the run.
    var samplesActiveConnections: Bool { metric == .kibPerTransfer }
    /// CPU per request is shown for workloads with many requests.
    var reportsCPUPerRequest: Bool { count > 1 }

    /// `location`: an nginx location serving the same files as /files/
    /// (`NginxConfig`: /cookies/, /cached/) to GET them from instead.
    func url(ports: NginxPorts, location: String? = nil) -> String {
        var path = fixture?.urlPath ?? "/sink"
        if let location, path.hasPrefix(Fixture.filesLocation) {
            path = location + path.dropFirst(Fixture.filesLocation.count)
        }
        return tls ? "https://127.0.0.1:\(ports.https)\(path)" : "http://127.0.0.1:\(ports.http)\(path)"
    }

    /// True when `filter` names this workload ("W1" or "W1-c16"), case-insensitively.
    func matches(_ filter: String) -> Bool {
        let wanted = filter.uppercased()
        return wanted == group.uppercased() || wanted == id.uppercased()
    }
}

extension Workload {
    static func all(quick: Bool) -> [Workload] {
        let requests1k = quick ? 200 : 20_000
        var list: [Workload] = []
        for concurrency in [1, 16, 64] {
            list.append(Workload(
                id: "W1-c\(concurrency)", group: "W1",
                title: "\(requests1k) GETs of 1 KiB, concurrency \(concurrency), HTTP/1.1",
                fixture: .kib1, tls: false, count: requests1k, concurrency: concurrency, postBytes: 0,
                stream: false, consumeBytesPerSecond: 0, metric: .requestsPerSecond,
                clientTimeout: quick ? 60 : 240))
        }
        let big: Fixture = quick ? .mib1 : .mib256
        list.append(Workload(
            id: "W2", group: "W2", title: "one GET of \(big == .mib1 ? "1 MiB" : "256 MiB"), HTTP/1.1",
            fixture: big, tls: false, count: 1, concurrency: 1, postBytes: 0,
            stream: true, consumeBytesPerSecond: 0, metric: .megabytesPerSecond,
            clientTimeout: quick ? 60 : 120, runMultiplier: 3))
        let gets1m = quick ? 20 : 2_000
        list.append(Workload(
            id: "W3", group: "W3", title: "\(gets1m) GETs of 1 MiB, concurrency 64, HTTP/1.1",
            fixture: .mib1, tls: false, count: gets1m, concurrency: 64, postBytes: 0,
            stream: false, consumeBytesPerSecond: 0, metric: .megabytesPerSecond,
            clientTimeout: quick ? 60 : 180))
        let posts = quick ? 10 : 500
        list.append(Workload(
            id: "W4", group: "W4", title: "\(posts) POSTs of 1 MiB, concurrency 16, HTTP/1.1, body read by nginx",
            fixture: nil, tls: false, count: posts, concurrency: 16, postBytes: 1 << 20,
            stream: false, consumeBytesPerSecond: 0, metric: .megabytesPerSecond,
            clientTimeout: quick ? 60 : 180, runMultiplier: 3))
        list.append(Workload(
            id: "W5", group: "W5", title: "\(requests1k) GETs of 1 KiB, concurrency 64, HTTPS + HTTP/2",
            fixture: .kib1, tls: true, count: requests1k, concurrency: 64, postBytes: 0,
            stream: false, consumeBytesPerSecond: 0, metric: .requestsPerSecond,
            clientTimeout: quick ? 60 : 240))
        // 150 MiB/s: 1 GiB in about 7 s, 10-20x slower than loopback delivers it.
        let slow: Fixture = quick ? .mib1 : .gib1
        let rate = quick ? Double(8 << 20) : Double(150 << 20)
        list.append(Workload(
            id: "W6", group: "W6",
            title: "one GET of \(slow == .mib1 ? "1 MiB" : "1 GiB") read at \(Int(rate) >> 20) MiB/s (slow consumer)",
            fixture: slow, tls: false, count: 1, concurrency: 1, postBytes: 0,
            stream: true, consumeBytesPerSecond: rate, metric: .peakRSSMiB,
            clientTimeout: quick ? 60 : 120))
        let drips = quick ? 200 : 10_000
        let drip: Fixture = quick ? .drip1000 : .drip4000
        list.append(Workload(
            id: "W7", group: "W7",
            title: "\(drips) transfers in flight at once, \(drip.size) bytes each dripped at 1 KiB/s",
            fixture: drip, tls: false, count: drips, concurrency: drips, postBytes: 0,
            stream: true, consumeBytesPerSecond: 0, metric: .kibPerTransfer,
            clientTimeout: quick ? 60 : 150,
            // No warm-up: every run is a fresh process opening 10,000 fresh
            // connections, so a warm-up run has nothing to warm; it would add
            // about two minutes (a quarter of W7's time) to a full run.
            defaultWarmups: 0))
        // Not in a default run (`ClientTable.backgroundWorkloads`): --background
        // runs it, a foreground download against a background session's, whose
        // transfer runs in the agent process. The baseline streams the body
        // and drops it, as for W2.
        list += openLoop(quick: quick)
        let downloaded: Fixture = quick ? .mib1 : .gib1
        list.append(Workload(
            id: "W8", group: "W8", title: "one download of \(downloaded == .mib1 ? "1 MiB" : "1 GiB") to a file, HTTP/1.1",
            fixture: downloaded, tls: false, count: 1, concurrency: 1, postBytes: 0,
            stream: true, consumeBytesPerSecond: 0, metric: .megabytesPerSecond,
            clientTimeout: quick ? 60 : 180))
        return list
    }

    /// W9: the 1 KiB GET over HTTP/1.1 at a fixed arrival rate, 3 s at each
    /// rate (a tenth of a second with --quick), after 1,000 requests of
    /// warm-up (50). At most 256 in flight: a client that stalls queues
    /// requests (their wait counts) instead of opening sockets without end.
    private static func openLoop(quick: Bool) -> [Workload] {
        [5_000, 20_000].map { rate in
            let count = quick ? rate / 10 : rate * 3
            return Workload(
                id: "W9-r\(rate)", group: "W9",
                title: "\(count) GETs of 1 KiB sent at \(rate) per second (open loop, at most 256 in flight), HTTP/1.1",
                fixture: .kib1, tls: false, count: count, concurrency: 256, postBytes: 0,
                stream: false, consumeBytesPerSecond: 0, metric: .latencyP99Milliseconds,
                clientTimeout: quick ? 60 : 120, arrivalRate: Double(rate), rateWarmup: quick ? 50 : 1_000)
        }
    }
}
