// The clients under comparison. Adding one = one line here (plus its target in
// Package.swift). Each is an executable next to the harness's own.
import Foundation

/// Made with its memberwise initializer (the defaults below are the
/// initializer's); a run that passes more arguments adjusts a copy.
struct ClientSpec: Sendable {
    /// Short name used in tables, JSON and --clients.
    var name: String
    /// Product name of its executable.
    var executable: String
    /// Shown when the executable is missing.
    var missingHint = "not built"
    /// Passed after the workload's arguments: one executable, two ways to run it.
    var extraArguments: [String] = []
    /// The nginx location its GETs of files go to in place of /files/ (the
    /// same files, other headers: `NginxConfig`); nil for /files/.
    var location: String? = nil
}

enum ClientTable {
    /// Raw libcurl in its plainest loop (curl_multi_perform +
    /// curl_multi_poll): the first of the two baselines, and the one runs of
    /// their own (`--background`, `--features`, `--openapi`) keep.
    static let baseline = "rawcurl-poll"

    /// The two raw-libcurl loops the ratio column may divide by: per
    /// workload, whichever of them did better (`WorkloadReport.baseline`
    /// names it). rawcurl-reuse is the lean loop (Clients/RawCurl/reuse_loop.c):
    /// the same perform + poll shape with the fewest options and the least
    /// per-transfer work. Both are kept in every run that keeps the baseline.
    static let baselines = [baseline, "rawcurl-reuse"]

    /// The other libraries compared with. Every client that is neither one
    /// of these nor the baseline is ours, and judged against the targets
    /// (`TargetJudge`), extra builds included.
    static let peers: Set<String> = ["foundation", "ahc"]

    /// Other references beside the baseline, never judged (the OpenAPI
    /// clients too: the targets are about our own APIs): raw libcurl in
    /// the event-loop shape our engine has (socket_action + epoll), and the
    /// same copying each body into a buffer of its own, the least a client
    /// that returns whole bodies (`data(for:)`) must do, which the
    /// discarding baseline never pays for.
    static let references = Set(["rawcurl", "rawcurl-collect"] + openAPI.map(\.name) + features.map(\.name))

    /// Our clients whose API returns the whole body in memory
    /// (`data(for:)`, the classic one too): the peak-RSS targets are about
    /// the streaming ones.
    static let collectsWholeBody: Set<String> = ["asyncurlsession-data", "asyncurlsession-io", "urlsessioncompat-async"]

    private static let ours = "not built: the AsyncURLSession library did not compile, or BENCH_ASYNCURLSESSION=0"

    static let all: [ClientSpec] = [
        ClientSpec(name: "rawcurl-poll", executable: "bench-rawcurl", extraArguments: ["--perform"]),
        ClientSpec(name: "rawcurl-reuse", executable: "bench-rawcurl", extraArguments: ["--reuse"]),
        ClientSpec(name: "rawcurl", executable: "bench-rawcurl"),
        ClientSpec(name: "rawcurl-collect", executable: "bench-rawcurl", extraArguments: ["--collect"]),
        ClientSpec(name: "foundation", executable: "bench-foundation"),
        ClientSpec(name: "ahc", executable: "bench-ahc"),
        ClientSpec(name: "asyncurlsession-events", executable: "bench-asyncurlsession-events", missingHint: ours),
        ClientSpec(name: "asyncurlsession-data", executable: "bench-asyncurlsession-data", missingHint: ours),
        ClientSpec(
            name: "asyncurlsession-io", executable: "bench-asyncurlsession-data", missingHint: ours,
            extraArguments: ["--io-executor"]),
        ClientSpec(name: "urlsessioncompat", executable: "bench-urlsessioncompat", missingHint: ours),
    ] + classicStyles

    /// The classic API as the two other kinds of legacy code wait for it
    /// (`--classic-style`): a thread blocked on a semaphore
    /// (`urlsessioncompat-blocking`), and `data(for:)` on the classic
    /// session (`urlsessioncompat-async`).
    static let classicStyles: [ClientSpec] = ["blocking", "async"].map { style in
        ClientSpec(
            name: "urlsessioncompat-\(style)", executable: "bench-urlsessioncompat", missingHint: ours,
            extraArguments: ["--classic-style", style])
    }

    /// The same generated OpenAPI client on three transports: ours,
    /// swift-openapi-urlsession's and swift-openapi-async-http-client's.
    /// Not in a default run; `--openapi` runs them (or `--clients` names them).
    static let openAPI: [ClientSpec] = [
        ClientSpec(name: "openapi-asyncurlsession", executable: "bench-openapi-asyncurlsession", missingHint: ours),
        ClientSpec(name: "openapi-urlsession", executable: "bench-openapi-urlsession"),
        ClientSpec(name: "openapi-ahc", executable: "bench-openapi-ahc"),
    ]

    /// `--openapi` runs these plain clients beside the OpenAPI ones: the
    /// library under each transport, so the transport's own cost shows.
    static let openAPIReferences: Set<String> = ["foundation", "ahc", "asyncurlsession-events"]

    /// `--openapi`'s workloads when `--only` is not given: small requests
    /// and 1 MiB bodies both ways.
    static let openAPIWorkloads = ["W1", "W3", "W4"]

    /// A foreground download against a background session's, both through
    /// the events client (`session.downloadTask(with:)`, the file's size
    /// counted, the file deleted). The background one's transfer runs in a
    /// `bench-agent` process of its own, whose CPU time its notes give (the
    /// CPU column is the client process's only). Not in a default run;
    /// `--background` runs them beside the baseline (or `--clients` names them).
    static let background: [ClientSpec] = [
        ClientSpec(
            name: "asyncurlsession-download", executable: "bench-asyncurlsession-events", missingHint: ours,
            extraArguments: ["--download"]),
        ClientSpec(
            name: "asyncurlsession-background", executable: "bench-asyncurlsession-events", missingHint: ours,
            extraArguments: ["--background"]),
    ]

    /// `--background`'s workloads when `--only` is not given, and the ones a
    /// default run leaves out: one 1 GiB download.
    static let backgroundWorkloads = ["W8"]

    /// `asyncurlsession-data` with one session feature turned on
    /// (`--feature`, see `Clients/AsyncURLSessionShared/SessionFeature.swift`),
    /// the rest of the session as in `asyncurlsession-data`: a cookie jar in
    /// memory, with responses that set a cookie (/cookies/); a response
    /// cache in memory and on disk, with cacheable responses (/cached/) that
    /// every request still reloads; a logger at trace level whose handler
    /// counts and drops the messages. Never judged against the targets (they
    /// are about the plain client). Not in a default run; `--features` runs
    /// them beside the baseline and the plain client (or `--clients` names them).
    static let features: [ClientSpec] = [
        ClientSpec(
            name: "asyncurlsession-data+cookies", executable: "bench-asyncurlsession-data", missingHint: ours,
            extraArguments: ["--feature", "cookies"], location: "/cookies/"),
        ClientSpec(
            name: "asyncurlsession-data+cache", executable: "bench-asyncurlsession-data", missingHint: ours,
            extraArguments: ["--feature", "cache"], location: "/cached/"),
        ClientSpec(
            name: "asyncurlsession-data+logging", executable: "bench-asyncurlsession-data", missingHint: ours,
            extraArguments: ["--feature", "logging"]),
        ClientSpec(
            name: "asyncurlsession-data+tracing", executable: "bench-asyncurlsession-data", missingHint: ours,
            extraArguments: ["--feature", "tracing"]),
        ClientSpec(
            name: "asyncurlsession-data+metrics", executable: "bench-asyncurlsession-data", missingHint: ours,
            extraArguments: ["--feature", "metrics"]),
        ClientSpec(
            name: "asyncurlsession-data+middleware", executable: "bench-asyncurlsession-data", missingHint: ours,
            extraArguments: ["--feature", "middleware"]),
        ClientSpec(
            name: "asyncurlsession-data+retry", executable: "bench-asyncurlsession-data", missingHint: ours,
            extraArguments: ["--feature", "retry"]),
        ClientSpec(
            name: "asyncurlsession-data+har", executable: "bench-asyncurlsession-data", missingHint: ours,
            extraArguments: ["--feature", "har"]),
    ]

    /// `--features` runs the feature rows beside this client, the same with
    /// every feature off.
    static let featuresReference = "asyncurlsession-data"

    /// `--features`' workloads when `--only` is not given.
    static let featureWorkloads = ["W1-c64"]

    /// `--count`'s clients when `--clients` is not given: our three APIs,
    /// raw libcurl in its three loops, and AsyncHTTPClient.
    static let counted: Set<String> = [
        baseline, "rawcurl-reuse", "rawcurl", "ahc", "asyncurlsession-data", "asyncurlsession-events", "urlsessioncompat",
    ]

    /// Every client a run can name.
    static var known: [ClientSpec] { all + openAPI + background + features }

    /// `NAME=/absolute/path`: an extra client outside the table (an older
    /// build to compare with); nil for a plain name.
    static func extra(from entry: String) -> ClientSpec? {
        guard let equals = entry.firstIndex(of: "=") else { return nil }
        let name = String(entry[..<equals])
        let path = String(entry[entry.index(after: equals)...])
        guard !name.isEmpty, path.hasPrefix("/") else { return nil }
        return ClientSpec(name: name, executable: path)
    }
}
