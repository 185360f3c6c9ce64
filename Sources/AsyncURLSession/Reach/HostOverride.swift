import Foundation

/// Sends a session's connections for one host and port somewhere else while
/// every request stays for the name in its URL: the Host header, TLS's SNI,
/// certificate verification, cookies, cache and credentials all still use
/// the URL's name. As curl's `--resolve` and `--connect-to`:
///
/// ```swift
/// var configuration = SessionConfiguration.ephemeral
/// configuration.hostOverrides = [
///     // api.example.com:443 is 127.0.0.1 (no DNS lookup for it).
///     try .resolve("api.example.com", port: 443, to: ["127.0.0.1"]),
///     // Connections for old.example.com:443 go to new.example.com:8443.
///     try .connect("old.example.com", port: 443, to: "new.example.com", port: 8443),
/// ]
/// ```
///
/// Every entry is checked when it is made: a malformed one throws
/// `HostOverride.Problem` naming it, so a configuration never holds one.
/// A session's overrides apply to all its tasks and to no other session's
/// (each session has its own DNS cache and connection pool).
public struct HostOverride: Sendable, Hashable, CustomStringConvertible {
    /// Where connections for `host`:`port` go.
    public enum Target: Sendable, Hashable {
        /// These addresses (IPv4 or IPv6, numeric), tried in order, instead
        /// of resolving the name (CURLOPT_RESOLVE).
        case addresses([String])
        /// This host and port instead (CURLOPT_CONNECT_TO): nil keeps the
        /// URL's host or port. The target host is resolved as usual.
        case endpoint(host: String?, port: Int?)
    }

    /// The name as written in URLs (compared case-insensitively); nil: any
    /// host (connect-to only), "*" for a resolve entry: any host.
    public let host: String?
    /// The port as the URL gives it, or its scheme's default (80, 443);
    /// nil: any port (connect-to only).
    public let port: Int?
    public let target: Target

    /// Why an override entry was refused.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// The entry, as given.
        public let entry: String
        public let reason: String
        public var description: String { "Host override '\(entry.debugDescription.dropFirst().dropLast())': \(reason)" }
    }

    /// Connections for `host`:`port` go to `addresses` (curl's `--resolve
    /// host:port:addr[,addr]`). `host` may be "*" for any host.
    public static func resolve(_ host: String, port: Int, to addresses: [String]) throws -> HostOverride {
        let entry = "\(host):\(port):\(addresses.joined(separator: ","))"
        let name = try Self.hostName(host, entry: entry, allowsWildcard: true)
        try Self.check(port: port, entry: entry)
        guard !addresses.isEmpty else { throw Problem(entry: entry, reason: "give at least one address.") }
        let numeric = try addresses.map { try Self.numericAddress($0, entry: entry) }
        return HostOverride(host: name, port: port, target: .addresses(numeric))
    }

    /// Connections for `host`:`port` go to `targetHost`:`targetPort`
    /// (curl's `--connect-to host:port:connect-host:connect-port`). A nil
    /// `host` or `port` matches any; a nil target keeps the URL's.
    public static func connect(_ host: String?, port: Int?, to targetHost: String?, port targetPort: Int?) throws
        -> HostOverride
    {
        let entry = "\(host ?? ""):\(port.map(String.init) ?? ""):\(targetHost ?? ""):\(targetPort.map(String.init) ?? "")"
        let name = try host.map { try Self.hostName($0, entry: entry, allowsWildcard: false) }
        let target = try targetHost.map { try Self.hostName($0, entry: entry, allowsWildcard: false) }
        if let port { try Self.check(port: port, entry: entry) }
        if let targetPort { try Self.check(port: targetPort, entry: entry) }
        guard target != nil || targetPort != nil else {
            throw Problem(entry: entry, reason: "give a host or a port to connect to.")
        }
        return HostOverride(host: name, port: port, target: .endpoint(host: target, port: targetPort))
    }

    /// An entry in curl's `--resolve` syntax, `host:port:addr[,addr]...`
    /// (an IPv6 address in brackets: `example.com:443:[::1]`).
    public init(resolve entry: String) throws {
        try Self.refuseControlCharacters(entry)
        guard !entry.hasPrefix("+"), !entry.hasPrefix("-") else {
            throw Problem(
                entry: entry, reason: "curl's '+' (expiring) and '-' (removing) entries are not supported: "
                    + "a session's overrides last as long as the session.")
        }
        let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw Problem(entry: entry, reason: "expected host:port:address[,address].") }
        guard let port = Int(parts[1]) else { throw Problem(entry: entry, reason: "'\(parts[1])' is not a port number.") }
        do {
            self = try .resolve(String(parts[0]), port: port, to: parts[2].split(separator: ",", omittingEmptySubsequences: false).map(String.init))
        } catch let problem as Problem {
            throw Problem(entry: entry, reason: problem.reason)
        }
    }

    /// An entry in curl's `--connect-to` syntax,
    /// `host:port:connect-host:connect-port`, where an empty part means any
    /// (source) or unchanged (target); IPv6 addresses in brackets.
    public init(connectTo entry: String) throws {
        try Self.refuseControlCharacters(entry)
        var rest = Substring(entry)
        func field() throws -> String {
            if rest.first == "[" {
                guard let close = rest.firstIndex(of: "]") else {
                    throw Problem(entry: entry, reason: "an IPv6 address lacks its ']'.")
                }
                let value = rest[...close]
                rest = rest[rest.index(after: close)...]
                return String(value)
            }
            let end = rest.firstIndex(of: ":") ?? rest.endIndex
            let value = rest[..<end]
            rest = rest[end...]
            return String(value)
        }
        func colon() throws {
            guard rest.first == ":" else {
                throw Problem(entry: entry, reason: "expected host:port:connect-host:connect-port.")
            }
            rest = rest.dropFirst()
        }
        func port(_ text: String) throws -> Int? {
            guard !text.isEmpty else { return nil }
            guard let value = Int(text) else { throw Problem(entry: entry, reason: "'\(text)' is not a port number.") }
            return value
        }
        let host = try field()
        try colon()
        let sourcePort = try port(try field())
        try colon()
        let target = try field()
        try colon()
        let targetPort = try port(try field())
        guard rest.isEmpty else { throw Problem(entry: entry, reason: "expected host:port:connect-host:connect-port.") }
        do {
            self = try .connect(
                host.isEmpty ? nil : host, port: sourcePort, to: target.isEmpty ? nil : target, port: targetPort)
        } catch let problem as Problem {
            throw Problem(entry: entry, reason: problem.reason)
        }
    }

    private init(host: String?, port: Int?, target: Target) {
        self.host = host
        self.port = port
        self.target = target
    }

    /// The entry in curl's syntax.
    public var description: String { curlLine }

    /// The line for CURLOPT_RESOLVE or CURLOPT_CONNECT_TO.
    var curlLine: String {
        let source = "\(host ?? ""):\(port.map(String.init) ?? "")"
        switch target {
        case .addresses(let addresses): return "\(source):\(addresses.joined(separator: ","))"
        case .endpoint(let host, let port): return "\(source):\(host ?? ""):\(port.map(String.init) ?? "")"
        }
    }

    var isResolve: Bool {
        if case .addresses = target { return true }
        return false
    }

    // MARK: Checks

    private static func refuseControlCharacters(_ entry: String) throws {
        if entry.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) {
            throw Problem(entry: entry, reason: "it contains a space or a control character (CR, LF, NUL, ...).")
        }
    }

    private static func check(port: Int, entry: String) throws {
        guard (1...65535).contains(port) else {
            throw Problem(entry: entry, reason: "the port \(port) is not between 1 and 65535.")
        }
    }

    /// A host name (letters, digits, '-', '.', '_'), lowercased, or an IP
    /// literal (IPv6 given back in brackets, as curl's lists spell it).
    private static func hostName(_ host: String, entry: String, allowsWildcard: Bool) throws -> String {
        try refuseControlCharacters(host)
        if allowsWildcard, host == "*" { return host }
        if host.hasPrefix("[") || host.contains(":") { return try numericAddress(host, entry: entry) }
        let allowed = host.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
        }
        guard !host.isEmpty, host.utf8.count <= 253, allowed else {
            throw Problem(
                entry: entry,
                reason: "'\(host)' is not a host name (letters, digits, '-', '.', '_'; IPv6 addresses in brackets).")
        }
        return host.lowercased()
    }

    /// A numeric IPv4 or IPv6 address, IPv6 given back in brackets.
    private static func numericAddress(_ text: String, entry: String) throws -> String {
        try refuseControlCharacters(text)
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        var v4 = in_addr()
        var v6 = in6_addr()
        if !text.hasPrefix("["), inet_pton(AF_INET, bare, &v4) == 1 { return bare }
        if inet_pton(AF_INET6, bare, &v6) == 1 { return "[\(bare)]" }
        throw Problem(entry: entry, reason: "'\(text)' is not a numeric IPv4 or IPv6 address.")
    }
}
