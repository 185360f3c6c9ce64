// swift-tools-version: 6.1
// Benchmark harness for AsyncURLSession: a package of its own, so that building
// AsyncHTTPClient and the other peers never slows the main package's `swift test`.
//
//   swift run -c release --package-path Sources/Benchmarks Benchmarks [--quick] ...
//
// One harness executable (`Benchmarks`) starts nginx on 127.0.0.1 and runs every
// client below as a separate process. Adding a client = one line in `clients`
// here plus one line in Harness/ClientTable.swift.
//
// Environment knob read by this manifest:
//   BENCH_ASYNCURLSESSION=0  leave out the clients built on the main package
//                            (for when the library does not compile); =1 forces them in.
import PackageDescription

/// Clients built on the main package (AsyncURLSession). On by default; set
/// BENCH_ASYNCURLSESSION=0 to build the harness without them.
let includeAsyncURLSession = Context.environment["BENCH_ASYNCURLSESSION"].map { $0 != "0" } ?? true

let ahc = Target.Dependency.product(name: "AsyncHTTPClient", package: "async-http-client")
let nioCore = Target.Dependency.product(name: "NIOCore", package: "swift-nio")
let nioSSL = Target.Dependency.product(name: "NIOSSL", package: "swift-nio-ssl")
let ours = Target.Dependency.product(name: "AsyncURLSession", package: "AsyncURLSession")
let oursClassic = Target.Dependency.product(name: "URLSessionCompat", package: "AsyncURLSession")
/// The background transfer agent as a library (`AgentProgram.main()`), for bench-agent.
let oursAgent = Target.Dependency.product(name: "AsyncURLSessionAgent", package: "AsyncURLSession")
/// Session and request setup shared by the clients built on the main package.
let sessionSetup = Target.Dependency.target(name: "BenchSessionSetup")
/// The count build's tally of our locks, for the clients on our three APIs.
let lockCount = Target.Dependency.target(name: "BenchLockCount")
/// The generated OpenAPI client and the workload loop the OpenAPI clients share.
let openAPIShared = Target.Dependency.target(name: "BenchOpenAPIShared")
let openAPIOurs = Target.Dependency.product(name: "AsyncURLSessionOpenAPI", package: "AsyncURLSession")
let openAPIURLSession = Target.Dependency.product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession")
let openAPIAHC = Target.Dependency.product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client")

/// One line per client: executable name, source folder, dependencies.
/// (bench-rawcurl is a C target and is declared separately below.)
struct SwiftClient {
    let name: String
    let path: String
    let dependencies: [Target.Dependency]
    let needsMainPackage: Bool
}

let swiftClients: [SwiftClient] = [
    SwiftClient(name: "bench-foundation", path: "Clients/Foundation", dependencies: [], needsMainPackage: false),
    SwiftClient(name: "bench-ahc", path: "Clients/AHC", dependencies: [ahc, nioCore, nioSSL], needsMainPackage: false),
    SwiftClient(name: "bench-asyncurlsession-events", path: "Clients/AsyncURLSessionEvents", dependencies: [ours, sessionSetup, lockCount], needsMainPackage: true),
    SwiftClient(name: "bench-asyncurlsession-data", path: "Clients/AsyncURLSessionData", dependencies: [ours, sessionSetup, lockCount], needsMainPackage: true),
    SwiftClient(name: "bench-urlsessioncompat", path: "Clients/URLSessionCompat", dependencies: [oursClassic, lockCount], needsMainPackage: true),
    // The same generated OpenAPI client on three transports (Benchmarks --openapi).
    SwiftClient(
        name: "bench-openapi-asyncurlsession", path: "Clients/OpenAPIAsyncURLSession",
        dependencies: [openAPIShared, openAPIOurs, sessionSetup], needsMainPackage: true),
    SwiftClient(
        name: "bench-openapi-urlsession", path: "Clients/OpenAPIURLSession",
        dependencies: [openAPIShared, openAPIURLSession], needsMainPackage: false),
    SwiftClient(
        name: "bench-openapi-ahc", path: "Clients/OpenAPIAHC",
        dependencies: [openAPIShared, openAPIAHC, ahc, nioCore], needsMainPackage: false),
].filter { includeAsyncURLSession || !$0.needsMainPackage }

var dependencies: [Package.Dependency] = [
    .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    // The OpenAPI comparison: the generator's build plugin, the runtime, and
    // the two peer transports.
    .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
    .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
    .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
    .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
    // SHA-256 of echoed bodies in the OpenAPI checks (already in the main package's graph).
    .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    // The logger of `--feature logging` (already in the main package's graph).
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    // The tracer of `--feature tracing` and the metrics factory of
    // `--feature metrics`: the libraries' in-memory backends.
    .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    // `Benchmarks --count`: heap allocations counted by this library,
    // preloaded into each client (LD_PRELOAD), never linked into one.
    .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.1"),
]
if includeAsyncURLSession {
    // The main package, two levels up; named so the identity does not depend on
    // the name of the checkout's folder.
    dependencies.append(.package(name: "AsyncURLSession", path: "../.."))
}

let clientTargets: [Target] = swiftClients.map { client in
    .executableTarget(
        name: client.name,
        dependencies: ["BenchClientSupport"] + client.dependencies,
        path: client.path
    )
}

let package = Package(
    name: "AsyncURLSessionBenchmarks",
    platforms: [.macOS(.v15)],
    products: [.executable(name: "Benchmarks", targets: ["Benchmarks"])],
    dependencies: dependencies,
    targets: [
        // The harness. It depends on every client so that `swift run Benchmarks`
        // builds them all; it never imports them, it spawns them.
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "BenchClientSupport",
                "bench-launch",
                "bench-rawcurl",
                // Not called: linked so that `swift run Benchmarks` builds
                // libMallocInterposerSwift.so beside the clients, for
                // `--count` to preload into them.
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ] + swiftClients.map { .target(name: $0.name) }
                + (includeAsyncURLSession ? [.target(name: "bench-agent")] : []),
            path: "Harness"
        ),
        // Shared by the Swift clients: arguments, result line, limits, pacing.
        .target(name: "BenchClientSupport", path: "ClientSupport"),
        // The client swift-openapi-generator makes from openapi.yaml (at build
        // time, by its plugin), and the workload loop on any ClientTransport.
        .target(
            name: "BenchOpenAPIShared",
            dependencies: [
                "BenchClientSupport",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Clients/OpenAPIShared",
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // Runs one client and reports its own wait4 rusage (see its header).
        .executableTarget(name: "bench-launch", path: "Clients/Launch"),
        // The ceiling: raw libcurl multi interface, in C.
        .executableTarget(
            name: "bench-rawcurl",
            path: "Clients/RawCurl",
            linkerSettings: [.linkedLibrary("curl")]
        ),
    ] + clientTargets + (includeAsyncURLSession ? [
        .target(
            name: "BenchSessionSetup",
            dependencies: [
                "BenchClientSupport", ours, .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            path: "Clients/AsyncURLSessionShared"),
        // `OurLocks.acquisitions`: the count build's tally of our locks
        // (`@_spi(Benchmarks) LockCounting`), nil in ordinary builds.
        .target(name: "BenchLockCount", dependencies: [ours], path: "Clients/LockCount"),
        // The background transfer agent, beside the clients: the background
        // session of `asyncurlsession-background` (Benchmarks --background)
        // starts it from there. Not a client: the harness never runs it.
        .executableTarget(name: "bench-agent", dependencies: [oursAgent], path: "Clients/Agent"),
        // WebSocket echo round trips: our core and classic tasks against
        // SwiftNIO's WebSocket client and FoundationNetworking's.
        .executableTarget(
            name: "websocket-bench",
            dependencies: [
                ours, oursClassic, nioCore,
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "LoopbackServer", package: "AsyncURLSession"),
            ],
            path: "WebSocketBench"
        ),
        // The three OpenAPI transports on the loopback server's routes, side
        // by side: what each gets right (streaming both ways, errors, cancellation).
        .executableTarget(
            name: "openapi-check",
            dependencies: [
                "BenchClientSupport", openAPIShared, openAPIOurs, openAPIURLSession, openAPIAHC, ahc,
                .product(name: "LoopbackServer", package: "AsyncURLSession"),
            ],
            path: "OpenAPICheck"
        ),
        // The spans of the same requests through our Session and
        // AsyncHTTPClient, each with an in-memory tracer, side by side.
        .executableTarget(
            name: "trace-check",
            dependencies: [
                "BenchClientSupport", ours, ahc,
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "LoopbackServer", package: "AsyncURLSession"),
            ],
            path: "TraceCheck"
        ),
    ] : [])
)
