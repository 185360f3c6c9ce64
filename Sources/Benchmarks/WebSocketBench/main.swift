// websocket-bench: WebSocket echo round trips against the loopback server's
// /ws/echo route (SwiftNIO's WebSocket server), messages per second for
// 64-byte and 64 KiB binary messages, one at a time and 16 in flight, for
// AsyncURLSession's core and classic WebSocket tasks, SwiftNIO's WebSocket
// client (the peer) and FoundationNetworking's (where its libcurl can).
// Medians of --runs runs, clients taking turns; ratios are to the peer.
// The server runs in this process, as every client does, one at a time.
//
//   swift run -c release --package-path Sources/Benchmarks websocket-bench [--quick] [--runs N]
//
// Exits 1 when one of our clients fails (a peer's failure is a finding).
import Foundation
import LoopbackServer

let arguments = CommandLine.arguments.dropFirst()
let quick = arguments.contains("--quick")
let runs = arguments.firstIndex(of: "--runs").flatMap { arguments.index(after: $0) < arguments.endIndex ? Int(arguments[arguments.index(after: $0)]) : nil }
    ?? (quick ? 1 : 3)

/// The whole run is bounded: a client that hangs must not keep CI waiting.
let watchdog = Thread {
    Thread.sleep(forTimeInterval: quick ? 120 : 1800)
    FileHandle.standardError.write(Data("websocket-bench: no end in time; giving up\n".utf8))
    exit(2)
}
watchdog.start()

struct Cell {
    let size: Int
    let count: Int
    let window: Int
    var label: String { "\(size >= 1024 ? "\(size / 1024) KiB" : "\(size) B"), \(window == 1 ? "one at a time" : "\(window) in flight")" }
}

let cells = [
    Cell(size: 64, count: quick ? 300 : 20_000, window: 1),
    Cell(size: 64, count: quick ? 300 : 20_000, window: 16),
    Cell(size: 65536, count: quick ? 50 : 2_000, window: 1),
    Cell(size: 65536, count: quick ? 50 : 2_000, window: 16),
]
let ours: [any EchoClient] = [CoreEchoClient(), ClassicEchoClient()]
let peers: [any EchoClient] = [NIOEchoClient(), FoundationEchoClient()]
let clients = ours + peers

let server = try await LoopbackServer.start()
let url = URL(string: "ws://127.0.0.1:\(server.port)/ws/echo")!

var failed = false
/// rates[cell][client]: messages per second of each run; nil once it failed.
var rates: [[[Double]?]] = Array(repeating: Array(repeating: [], count: clients.count), count: cells.count)
var failures: [String: String] = [:]
for run in 0..<runs {
    for (cellIndex, cell) in cells.enumerated() {
        let message = Data((0..<cell.size).map { UInt8(truncatingIfNeeded: $0) })
        // Clients take turns: a different one goes first in each run.
        for offset in 0..<clients.count {
            let index = (offset + run) % clients.count
            guard rates[cellIndex][index] != nil else { continue }
            let client = clients[index]
            do {
                let elapsed = try await client.roundTrips(url: url, message: message, count: cell.count, window: cell.window)
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                rates[cellIndex][index]?.append(Double(cell.count) / seconds)
            } catch {
                rates[cellIndex][index] = nil
                failures[client.name] = "\(error)"
                if index < ours.count { failed = true }
            }
        }
    }
}
try await server.shutdown()

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

print("WebSocket echo, messages per second (median of \(runs)); ratio to \(peers[0].name)")
for (cellIndex, cell) in cells.enumerated() {
    print("\n\(cell.label) (\(cell.count) messages)")
    let peer = rates[cellIndex][ours.count].map(median)
    for (index, client) in clients.enumerated() {
        guard let values = rates[cellIndex][index] else {
            print("  \(client.name.padding(toLength: 46, withPad: " ", startingAt: 0)) failed")
            continue
        }
        let rate = median(values)
        let ratio = peer.map { $0 > 0 ? String(format: "%.2fx", rate / $0) : "-" } ?? "-"
        print("  \(client.name.padding(toLength: 46, withPad: " ", startingAt: 0)) \(String(format: "%10.0f", rate))  \(ratio)")
    }
}
for (name, error) in failures.sorted(by: { $0.key < $1.key }) {
    print("\n\(name): \(error)")
}
exit(failed ? 1 : 0)
