// fetch: a curl-like command line client on AsyncURLSession.
//
//   fetch URL [-o FILE] [-X METHOD] [-H 'Name: value']... [-d DATA] [--events] [--trace] [--har FILE]
//             [--retry N] [--retry-max-time S] [--retry-delay S] [--connect-timeout S]
//             [--resolve H:P:ADDR] [--connect-to H:P:H2:P2] [--unix-socket PATH] [--interface IF] [-4|-6]
//   fetch --background URL [-o FILE]     (the agent downloads it; fetch returns)
//   fetch --background-status            (this user's background transfers)
//   fetch --session ID URL -o FILE       (a background session's download, waited for;
//                                         killed, `fetch --session ID -o FILE` takes it up)
//   fetch            (no URL: starts the built-in loopback server and runs a demo)
//
// Errors print one line naming what went wrong and exit non-zero.
import ArgumentParser
import AsyncURLSession
import Foundation

@main
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch a URL with AsyncURLSession (libcurl underneath).",
        discussion: """
            Without a URL, fetch starts its built-in loopback HTTP server on 127.0.0.1 \
            and demonstrates a few transfers against it.
            """)

    @Argument(help: "The http, https, http+unix or https+unix URL to fetch. Omit it to run the loopback demo.")
    var url: String?

    @Option(name: .shortAndLong, help: "Write the body to this file instead of standard output.")
    var output: String?

    @Option(name: [.customShort("X"), .customLong("request")], help: "The HTTP method (default GET, or POST with -d).")
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header, 'Name: value'. Repeatable.")
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], help: "A request body; '@FILE' reads it from a file.")
    var data: String?

    @Option(name: [.customShort("T"), .customLong("upload-file")], help: "Upload this file (read as it is sent; PUT unless -X says otherwise).")
    var uploadFile: String?

    @Option(name: .customLong("limit-rate"), help: "Read the body at most this many bytes per second (the transfer slows down to match).")
    var limitRate: Int?

    @Flag(help: "Print each task event as it arrives instead of the body.")
    var events = false

    @Flag(name: [.customShort("s"), .customLong("silent")], help: "No status line, headers or progress bar.")
    var silent = false

    @Flag(help: "Print the transfer's trace to standard error when it ends: its span, each attempt on the wire and libcurl's timings.")
    var trace = false

    @Option(name: .customLong("har"), help: "Write the transfer as a HAR 1.2 file (each hop an entry; secrets redacted).")
    var har: String?

    @Option(help: "A PEM file of certificates to trust instead of the system's (for private CAs).")
    var cacert: String?

    @Option(help: "Seconds without any byte before giving up (default 60).")
    var timeout: Double?

    @Option(help: "Go through this proxy: host:port or http://[user:pass@]host:port (HTTP), socks5h://host:port (SOCKS5).")
    var proxy: String?

    @Flag(name: .customLong("proxy-from-environment"), help: "Use http_proxy, https_proxy, all_proxy and no_proxy, as curl does.")
    var proxyFromEnvironment = false

    @Flag(help: "Hand the download to the background agent and return; it goes on after fetch exits (to -o FILE, or the URL's last name here).")
    var background = false

    @Flag(name: .customLong("background-status"), help: "List this user's background transfers with their progress (starts the agent if it is not running, which resumes them).")
    var backgroundStatus = false

    @Option(name: .customLong("session"), help: "Download through the background session with this identifier and wait for it (with -o FILE). Killed or interrupted, the download goes on in the agent; run fetch --session ID -o FILE without a URL to take it up.")
    var backgroundSession: String?

    @OptionGroup(title: "Connections")
    var reach: ReachOptions

    @OptionGroup(title: "Retries")
    var retry: RetryOptions

    @Flag(name: [.customShort("V"), .customLong("version")], help: "Print the libcurl this runs on, its protocols and features (as curl -V), and exit.")
    var printVersion = false

    func run() async throws {
        if printVersion {
            print(Self.versionText())
            return
        }
        if backgroundStatus {
            try BackgroundCommands.printStatus()
            return
        }
        if let backgroundSession {
            guard let output else { throw ValidationError("--session needs -o FILE: where the download goes.") }
            guard data == nil, uploadFile == nil, !background else {
                throw ValidationError("--session downloads only: drop -d, -T and --background.")
            }
            let request = try url.map { try RequestBuilder.request(url: $0, method: method, headers: headers, data: nil) }
            try await BackgroundCommands.runInSession(backgroundSession, request: request, output: output, silent: silent)
            return
        }
        if background {
            guard let url else { throw ValidationError("--background needs a URL.") }
            guard data == nil, uploadFile == nil else {
                throw ValidationError("--background downloads only: drop -d and -T.")
            }
            let request = try RequestBuilder.request(url: url, method: method, headers: headers, data: nil)
            try BackgroundCommands.start(request, output: output)
            return
        }
        guard let url else {
            try await LoopbackDemo().run()
            return
        }
        do {
            let request = try RequestBuilder.request(
                url: url, method: method, headers: headers, data: data)
            var configuration = SessionConfiguration.ephemeral
            if let timeout { configuration.timeoutIntervalForRequest = timeout }
            try reach.apply(to: &configuration)
            retry.apply(to: &configuration)
            if let cacert {
                configuration.tlsTrustRootsPEM = try Self.read(file: cacert, purpose: "the --cacert file")
            }
            if let proxy {
                guard let parsed = ProxyConfiguration.fromEnvironment(["all_proxy": proxy]) else {
                    throw ValidationError("--proxy '\(proxy)' is not host:port, http://host:port or socks5h://host:port.")
                }
                configuration.proxy = parsed
            } else if proxyFromEnvironment {
                configuration.proxy = ProxyConfiguration.fromEnvironment()
            }
            if let har {
                do {
                    configuration.harRecorder = try HARRecorder(fileURL: URL(fileURLWithPath: har))
                } catch {
                    throw FetchError("cannot write the --har file '\(har)': \(error.localizedDescription)")
                }
            }
            let tracePrinter = trace ? TracePrinter() : nil
            configuration.tracer = tracePrinter?.tracer
            // Printed however the transfer ends (a failure's trace says why).
            defer { tracePrinter?.printSpans() }
            let session = Session(configuration: configuration)
            if let scheme = request.url?.scheme?.lowercased(), scheme == "ws" || scheme == "wss" {
                try await WebSocketConsole(silent: silent).run(session.webSocketTask(with: request))
                return
            }
            let task: SessionTask
            if let uploadFile {
                var uploadRequest = request
                if method == nil { uploadRequest.httpMethod = "PUT" }
                task = session.uploadTask(with: uploadRequest, fromFile: URL(fileURLWithPath: uploadFile))
            } else if let output, !events {
                task = session.downloadTask(with: request)
                task.resume()
                try await DownloadWriter(destination: output, silent: silent).run(task)
                return
            } else {
                task = session.dataTask(with: request)
            }
            task.resume()
            if events {
                try await EventPrinter().print(task.events)
            } else {
                try await BodyWriter(outputPath: nil, silent: silent, limitRate: limitRate).write(task)
            }
        } catch let error as FetchError {
            throw error
        } catch {
            throw FetchError(describing: error)
        }
    }

    /// As `curl -V`: what the libcurl loaded at run time offers.
    static func versionText() -> String {
        """
        fetch (AsyncURLSession) libcurl/\(NetworkLibrary.version)\(NetworkLibrary.tlsLibrary.map { " " + $0 } ?? "")
        Protocols: \(NetworkLibrary.protocols.joined(separator: " "))
        Features: \(NetworkLibrary.features.joined(separator: " "))
        """
    }

    static func read(file path: String, purpose: String) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw FetchError("cannot read \(purpose) '\(path)': \(error.localizedDescription)")
        }
    }
}
