// openapi-check: the same generated client on three OpenAPI transports
// (ours, swift-openapi-urlsession's, swift-openapi-async-http-client's),
// run through OpenAPIChecks against the loopback server, printed side by
// side. Exits 1 when our transport fails a check (a peer's failure is a
// finding, not an error).
//
//   swift run -c release --package-path Sources/Benchmarks openapi-check
import AsyncHTTPClient
import AsyncURLSession
import AsyncURLSessionOpenAPI
import BenchClientSupport
import BenchOpenAPIShared
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import OpenAPIURLSession

// The whole run is bounded: a transport that ignores cancellation would
// otherwise keep the process alive past its checks' own limits.
RunWatchdog.start(seconds: 300, name: "openapi-check")

let server = try await LoopbackServer.start()
// An address nothing listens on: a server's port, once it has stopped.
let stopped = try await LoopbackServer.start()
let refusedURL = stopped.baseURL
try await stopped.shutdown()

let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
let transports: [(name: String, transport: any ClientTransport)] = [
    ("AsyncURLSessionTransport", AsyncURLSessionTransport(configuration: .init(session: Session(configuration: .ephemeral)))),
    ("URLSessionTransport", URLSessionTransport(configuration: .init(session: URLSession(configuration: .ephemeral)))),
    ("AsyncHTTPClientTransport", AsyncHTTPClientTransport(configuration: .init(client: httpClient))),
]

func run(_ transport: some ClientTransport) async -> [OpenAPICheckResult] {
    await OpenAPIChecks.run(
        serverURL: server.baseURL, refusedURL: refusedURL, transport: transport,
        pattern: { LoopbackServer.patternBody(count: $0) })
}

var columns: [[OpenAPICheckResult]] = []
for entry in transports {
    FileHandle.standardError.write(Data("openapi-check: \(entry.name)\n".utf8))
    columns.append(await run(entry.transport))
}
try await httpClient.shutdown().get()
try await server.shutdown()

let table = CheckTable.render(names: OpenAPIChecks.names, transports: transports.map(\.name), columns: columns)
FileHandle.standardOutput.write(Data((table + "\n").utf8))
let oursFailed = columns[0].filter { !$0.passed }
if !oursFailed.isEmpty {
    FileHandle.standardError.write(Data("openapi-check: \(transports[0].name) failed \(oursFailed.count) check(s)\n".utf8))
    exit(1)
}
