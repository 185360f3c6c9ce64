// The one JSON line a client prints on stdout when it ends. The harness reads
// the last line of the child's stdout that starts with "{" (bench-rawcurl prints
// the same keys from C).
import Foundation

public struct ClientResult: Codable, Sendable {
    public var client: String
    public var workload: String
    /// Which API call the client used, e.g. "URLSession.data(for:)".
    public var api: String
    public var requests = 0
    public var ok = 0
    public var errors = 0
    public var bytesReceived = 0
    public var bytesSent = 0
    /// From the first request started to the last one finished (setup excluded).
    public var elapsedSeconds = 0.0
    /// Resident set size right before the first request (after setup), KiB.
    public var rssBeforeKiB = 0
    /// HTTP version seen on responses, when the API exposes it ("1.1", "2").
    public var httpVersion: String?
    public var firstError: String?
    /// Set when the client cannot run this workload; the other counts are 0.
    public var unsupported: String?
    /// Remarks of the client's own for the table (e.g. the background
    /// agent's CPU time). nil is left out of the line, so the lines of
    /// clients that never set it are as before.
    public var notes: [String]?
    /// With `--count-warmup`: what the measured requests cost, counted.
    /// nil is left out of the line.
    public var counts: CountedWork?
    /// Open loop (`--rate`, W9): the measured requests' latencies from their
    /// intended send times. nil is left out of the line.
    public var latency: LatencySummary?

    public init(client: String, workload: String, api: String) {
        self.client = client
        self.workload = workload
        self.api = api
    }

    enum CodingKeys: String, CodingKey {
        case client, workload, api, requests, ok, errors
        case bytesReceived = "bytes_received"
        case bytesSent = "bytes_sent"
        case elapsedSeconds = "elapsed_s"
        case rssBeforeKiB = "rss_before_kib"
        case httpVersion = "http_version"
        case firstError = "first_error"
        case unsupported, notes, counts, latency
    }

    /// Writes the result as one line on stdout.
    public func print() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(self)) ?? Data(#"{"errors":1,"first_error":"result encoding failed"}"#.utf8)
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    /// Prints the result and ends the process at once, without exit
    /// handlers (`_exit`). Why: the harness reads peak RSS from the ended
    /// process, and the teardown of the libraries a client loads (libcurl
    /// pulls in some twenty, each with its own `_fini`) touched pages after
    /// the workload was over: W6 through the classic adapter peaked at
    /// 32.1 MiB with `exit` and 31.5 MiB with `_exit` (medians of 4). Every
    /// client ends this way, bench-rawcurl too.
    public func printAndExit() -> Never {
        print()
        _exit(exitStatus)
    }

    /// Prints an "unsupported" line and exits with status 0.
    public static func unsupported(
        client: String, arguments: ClientArguments, api: String, reason: String
    ) -> Never {
        var result = ClientResult(client: client, workload: arguments.workload, api: api)
        result.unsupported = reason
        result.print()
        exit(0)
    }

    /// Exit status: 0 when every request succeeded, 1 otherwise.
    public var exitStatus: Int32 { errors == 0 && ok == requests ? 0 : 1 }
}
