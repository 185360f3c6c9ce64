// trace-check: the same requests through our Session and AsyncHTTPClient,
// each with an in-memory tracer of its own, against the loopback server;
// prints, per request, each client's spans: their names, kinds, statuses,
// events and attributes, side by side. Exits 1 when ours records no client
// span for a request (a peer's gap is a finding, not an error).
//
//   swift run -c release --package-path Sources/Benchmarks trace-check
import AsyncHTTPClient
import AsyncURLSession
import BenchClientSupport
import Foundation
import InMemoryTracing
import LoopbackServer
import Tracing

RunWatchdog.start(seconds: 120, name: "trace-check")

let server = try await LoopbackServer.start()
let stopped = try await LoopbackServer.start()
let refused = stopped.url("/bytes/10")
try await stopped.shutdown()

let cases: [(name: String, url: URL)] = [
    ("GET 200", server.url("/bytes/100")),
    ("two redirects", server.url("/redirect/2")),
    ("404", server.url("/status/404")),
    ("connection refused", refused),
]

/// One client's finished spans for one request, as lines.
func describe(_ spans: [FinishedInMemorySpan]) -> [String] {
    guard !spans.isEmpty else { return ["(no span)"] }
    var lines: [String] = []
    for span in spans {
        let status = span.status.map { "\($0.code)" } ?? "unset"
        lines.append("span \"\(span.operationName)\" \(span.kind), status \(status), \(span.events.count) events"
            + (span.events.isEmpty ? "" : " (\(span.events.map(\.name).joined(separator: ", ")))"))
        var attributes: [String] = []
        span.attributes.forEach { name, value in attributes.append("  \(name) = \(value)") }
        lines.append(contentsOf: attributes.sorted())
    }
    return lines
}

var oursMissing: [String] = []
for entry in cases {
    let ourTracer = InMemoryTracer()
    var configuration = SessionConfiguration.ephemeral
    configuration.tracer = ourTracer
    configuration.timeoutIntervalForRequest = 10
    _ = try? await Session(configuration: configuration).data(from: entry.url)

    let theirTracer = InMemoryTracer()
    var theirConfiguration = HTTPClient.Configuration()
    theirConfiguration.tracing.tracer = theirTracer
    let theirs = HTTPClient(eventLoopGroupProvider: .singleton, configuration: theirConfiguration)
    if let response = try? await theirs.execute(HTTPClientRequest(url: entry.url.absoluteString), timeout: .seconds(10)) {
        _ = try? await response.body.collect(upTo: 1 << 20)
    }
    try await theirs.shutdown().get()

    let ours = ourTracer.finishedSpans
    if !ours.contains(where: { $0.kind == .client }) { oursMissing.append(entry.name) }
    print("== \(entry.name): \(entry.url.absoluteString)")
    print("AsyncURLSession:")
    for line in describe(ours) { print("  " + line) }
    print("AsyncHTTPClient:")
    for line in describe(theirTracer.finishedSpans) { print("  " + line) }
    print("")
}
try await server.shutdown()
if !oursMissing.isEmpty {
    FileHandle.standardError.write(Data("trace-check: no client span from AsyncURLSession for \(oursMissing.joined(separator: ", "))\n".utf8))
    exit(1)
}
