// swift-tools-version: 6.1
// AsyncURLSession: URLSession's model, async/await first, on libcurl.
// The core (CurlEngine + AsyncURLSession) depends on Foundation, libcurl, libpsl, libsqlite3, swift-log,
// and the API-only swift-distributed-tracing and swift-metrics packages.
// SwiftNIO and friends are used by the loopback test server and the CLI only.
import PackageDescription

let package = Package(
    name: "AsyncURLSession",
    platforms: [.macOS(.v15)],
    products: [
        // With BackgroundAgent, so a program on either serves as its own
        // background transfer agent when no agent program is found.
        .library(name: "AsyncURLSession", targets: ["AsyncURLSession", "BackgroundAgent"]),
        .library(name: "URLSessionCompat", targets: ["URLSessionCompat", "BackgroundAgent"]),
        // Scripted responses for users' tests; production code never links it.
        .library(name: "AsyncURLSessionTesting", targets: ["AsyncURLSessionTesting"]),
        // A swift-openapi-runtime ClientTransport on Session.
        .library(name: "AsyncURLSessionOpenAPI", targets: ["AsyncURLSessionOpenAPI"]),
        .library(name: "LoopbackServer", targets: ["LoopbackServer"]),
        .executable(name: "fetch", targets: ["fetch"]),
        // The background transfer agent, started on demand beside its programs.
        .executable(name: "asyncurlsession-agent", targets: ["asyncurlsession-agent"]),
        // The agent as a library (`AgentProgram.main()`), for an executable
        // of your own that runs as the agent (the benchmarks build one).
        .library(name: "AsyncURLSessionAgent", targets: ["BackgroundAgent"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Diagnostics: an optional Logger on the session configuration.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // Observability: spans and metrics, API only (the user picks the backend).
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-service-context.git", from: "1.5.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // The OpenAPI transport product only (never the core).
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // `swift package generate-documentation` (the DocC catalogs); a plugin, linked into nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
    ],
    targets: [
        // libcurl, found through pkg-config; the shim wraps the variadic C calls.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // libpsl: the Public Suffix List, for the cookie jar's Domain rules.
        .systemLibrary(
            name: "CPSL",
            pkgConfig: "libpsl",
            providers: [.apt(["libpsl-dev"])]
        ),
        // SQLite: the response cache's disk store (atomic commits, so a torn
        // write never yields a wrong body).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // One SQLite connection to a private file, in WAL mode: what the
        // response cache's disk store and the background agent's journal
        // share (a target of its own, so neither reaches into the other).
        .target(name: "SQLiteStore", dependencies: ["CSQLite"]),
        // A lock ThreadSanitizer can see, standing in for Synchronization.Mutex
        // only in sanitizer builds (-DASYNCURLSESSION_SANITIZER_LOCKS).
        .target(name: "SanitizerVisibleLock"),
        // The only module that imports CCurl: engine thread, handles, transfers.
        .target(name: "CurlEngine", dependencies: ["CCurl", "CTLSTrust", "SanitizerVisibleLock"]),
        // Server-trust hooks on the OpenSSL libcurl loaded (found at run time,
        // so no OpenSSL headers or link: see CTLSTrust.h).
        .target(name: "CTLSTrust", linkerSettings: [.linkedLibrary("dl")]),
        // A copy with cache-bypassing stores, for large collected bodies.
        .target(name: "CStreamingCopy"),
        // Runs the program as its own transfer agent, before its main, when
        // started so (ASYNCURLSESSION_RUN_AS_AGENT=1) by a background session.
        .target(name: "CAgentBoot"),
        // The public async core.
        .target(
            name: "AsyncURLSession",
            dependencies: [
                "CurlEngine", "CStreamingCopy", "CPSL", "CSQLite", "SQLiteStore", "SanitizerVisibleLock", "CAgentBoot",
                // Background sessions talk to the transfer agent (our own, Foundation only).
                "AgentWire",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "ServiceContextModule", package: "swift-service-context"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]),
        // The classic delegate and completion-handler API, built only on the
        // public API of AsyncURLSession.
        .target(name: "URLSessionCompat", dependencies: ["AsyncURLSession", "SanitizerVisibleLock"]),
        // A stub transport for users' tests (StubTransport), on the core's
        // public LocalTransport seam.
        .target(name: "AsyncURLSessionTesting", dependencies: ["AsyncURLSession", "SanitizerVisibleLock"]),
        // A ClientTransport for swift-openapi-generator clients.
        .target(
            name: "AsyncURLSessionOpenAPI",
            dependencies: [
                "AsyncURLSession",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]),
        // Background sessions (issue 32). What programs and the transfer
        // agent share: the agent's per-user folder, peer credentials, the
        // framing of their messages.
        .target(name: "AgentWire"),
        // The transfer agent's parts: its crash-safe journal (SQLite, WAL)
        // and the runner that takes downloads to their end on the core.
        .target(
            name: "BackgroundAgent",
            dependencies: [
                "AgentWire", "CSQLite", "SQLiteStore", "AsyncURLSession", .product(name: "Logging", package: "swift-log"),
            ]),
        // The agent program: one per user, started on demand (AgentClient).
        .executableTarget(
            name: "asyncurlsession-agent",
            dependencies: ["BackgroundAgent"]),
        // Real HTTP/1.1 (+ TLS, HTTP/2) server for tests, the CLI demo and benchmarks.
        .target(
            name: "LoopbackServer",
            dependencies: [
                // Its locks, visible to ThreadSanitizer in `.ci/sanitize` runs.
                "SanitizerVisibleLock",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The main job: a curl-like CLI on the library.
        .executableTarget(
            name: "fetch",
            dependencies: [
                "AsyncURLSession",
                "AgentWire",
                "URLSessionCompat",
                "LoopbackServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `--trace`: the spans kept in memory and printed.
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // Every parser of untrusted bytes under libFuzzer (`.ci/fuzz`), or,
        // in a plain build, replaying Tests/FuzzCorpus with mutations.
        .target(name: "CFuzzerDriver"),
        .executableTarget(name: "fuzz-parsers", dependencies: ["AsyncURLSession", "CurlEngine", "AgentWire", "CFuzzerDriver"]),
        // What every test target uses: time limits, a per-test loopback server.
        .target(name: "TestSupport", dependencies: ["LoopbackServer", "SanitizerVisibleLock"], path: "Tests/TestSupport"),
        .testTarget(name: "CurlEngineTests", dependencies: ["CurlEngine", "SanitizerVisibleLock", "TestSupport"]),
        .testTarget(
            name: "AsyncURLSessionTests",
            dependencies: [
                "AsyncURLSession",
                // The background link's state machine is tested with the wire's statuses.
                "AgentWire",
                // Its fuzz entry (the response head parser) for the corpus test.
                "CurlEngine",
                "CStreamingCopy",
                "LoopbackServer",
                "TestSupport",
                "AsyncURLSessionTesting",
                .product(name: "Logging", package: "swift-log"),
                "SanitizerVisibleLock",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceContextModule", package: "swift-service-context"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "AsyncURLSessionOpenAPITests",
            dependencies: [
                "AsyncURLSessionOpenAPI", "AsyncURLSession", "LoopbackServer", "TestSupport",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]),
        .testTarget(name: "LoopbackServerTests", dependencies: ["LoopbackServer", "TestSupport"]),
        .testTarget(
            name: "BackgroundAgentTests",
            dependencies: [
                "BackgroundAgent", "AgentWire", "AsyncURLSession", "URLSessionCompat", "LoopbackServer", "TestSupport",
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
        // Every code block of MIGRATION.md, compiled (and run by the tests):
        // before (FoundationNetworking), after (URLSessionCompat), async core.
        .target(name: "MigrationGuideBefore", path: "Tests/MigrationGuide/Before"),
        .target(name: "MigrationGuideAfter", dependencies: ["URLSessionCompat"], path: "Tests/MigrationGuide/After"),
        .target(name: "MigrationGuideAsync", dependencies: ["AsyncURLSession"], path: "Tests/MigrationGuide/Async"),
        // Legacy code as it is really written: sessions made inline and never
        // stored, delegates that answer from anywhere, tasks nobody holds.
        // MIGRATION.md's legacy XCTest that stubs the network with a URLProtocol.
        .testTarget(name: "MigrationGuideXCTests", dependencies: ["URLSessionCompat"], path: "Tests/MigrationGuide/StubbingXCTest"),
        .testTarget(name: "LegacyStyleTests", dependencies: ["URLSessionCompat", "LoopbackServer", "TestSupport"]),
        // A program as users write them (one task, then the end of main),
        // run by tests in a process of its own: what a program leaves on
        // disk when it ends.
        // It depends on BackgroundAgent as a program on the products does.
        .executableTarget(
            name: "user-program", dependencies: ["URLSessionCompat", "BackgroundAgent"], path: "Tests/UserProgram"),
        .testTarget(
            name: "URLSessionCompatTests",
            dependencies: [
                "URLSessionCompat", "LoopbackServer", "TestSupport", "AsyncURLSessionTesting", "SanitizerVisibleLock",
                "MigrationGuideBefore", "MigrationGuideAfter", "MigrationGuideAsync",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
    ]
)
