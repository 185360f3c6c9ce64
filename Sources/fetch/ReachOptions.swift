import ArgumentParser
import AsyncURLSession
import Foundation

/// Where connections go and come from, in curl's words: --resolve,
/// --connect-to, --unix-socket, --abstract-unix-socket, --interface, -4, -6,
/// --happy-eyeballs-timeout-ms.
struct ReachOptions: ParsableArguments {
    @Option(name: .customLong("resolve"), help: "host:port:addr[,addr]: connect to these addresses for host:port (TLS still checks the name). Repeatable.")
    var resolve: [String] = []

    @Option(name: .customLong("connect-to"), help: "host:port:connect-host:connect-port: connect there for host:port (empty parts: any, or unchanged). Repeatable.")
    var connectTo: [String] = []

    @Option(name: .customLong("unix-socket"), help: "Talk HTTP over this Unix domain socket (the URL's host is only the Host header).")
    var unixSocket: String?

    @Option(name: .customLong("abstract-unix-socket"), help: "Talk HTTP over this Linux abstract Unix socket (a name, no file).")
    var abstractUnixSocket: String?

    @Option(name: .customLong("interface"), help: "Connect from this interface or local address (if!NAME or host!ADDRESS to say which).")
    var interface: String?

    @Flag(name: [.customShort("4"), .customLong("ipv4")], help: "Use IPv4 only.")
    var ipv4 = false

    @Flag(name: [.customShort("6"), .customLong("ipv6")], help: "Use IPv6 only.")
    var ipv6 = false

    @Flag(name: .customLong("http3"), help: "Try HTTP/3 first (where this libcurl has it: see --version), falling back to HTTP/2 or 1.1.")
    var http3 = false

    @Option(name: .customLong("happy-eyeballs-timeout-ms"), help: "Milliseconds before the other IP version is tried beside the first (default 200).")
    var happyEyeballsTimeoutMilliseconds: Int?

    func validate() throws {
        if ipv4 && ipv6 { throw ValidationError("-4 and -6 exclude each other.") }
        if unixSocket != nil && abstractUnixSocket != nil {
            throw ValidationError("--unix-socket and --abstract-unix-socket exclude each other.")
        }
        if let delay = happyEyeballsTimeoutMilliseconds, delay < 0 {
            throw ValidationError("--happy-eyeballs-timeout-ms must not be negative.")
        }
    }

    /// Sets these options on `configuration`; a malformed one throws a
    /// line that names it.
    func apply(to configuration: inout SessionConfiguration) throws {
        do {
            configuration.hostOverrides = try resolve.map { try HostOverride(resolve: $0) }
                + connectTo.map { try HostOverride(connectTo: $0) }
            if let unixSocket { configuration.unixSocket = try .path(unixSocket) }
            if let abstractUnixSocket { configuration.unixSocket = try .abstract(abstractUnixSocket) }
            if let interface { configuration.localEndpoint = try Self.localEndpoint(interface) }
        } catch let problem as HostOverride.Problem {
            throw ValidationError(problem.description)
        } catch let problem as UnixSocket.Problem {
            throw ValidationError(problem.description)
        } catch let problem as LocalEndpoint.Problem {
            throw ValidationError("--interface: \(problem.description)")
        }
        if ipv4 { configuration.ipVersion = .v4Only }
        if ipv6 { configuration.ipVersion = .v6Only }
        if http3 {
            configuration.assumesHTTP3Capable = true
            if !NetworkLibrary.supportsHTTP3 {
                FileHandle.standardError.write(Data(
                    "fetch: --http3: libcurl \(NetworkLibrary.version) has no HTTP/3; using HTTP/2 or 1.1\n".utf8))
            }
        }
        if let delay = happyEyeballsTimeoutMilliseconds { configuration.happyEyeballsDelay = Double(delay) / 1000 }
    }

    /// curl's --interface: "if!NAME", "host!ADDRESS", or a word that is an
    /// address when it parses as one and an interface otherwise.
    private static func localEndpoint(_ value: String) throws -> LocalEndpoint {
        if value.hasPrefix("if!") { return try .interface(String(value.dropFirst(3))) }
        if value.hasPrefix("host!") { return try .address(String(value.dropFirst(5))) }
        if let address = try? LocalEndpoint.address(value) { return address }
        return try .interface(value)
    }
}
