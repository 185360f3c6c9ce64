import Foundation

/// The local side of a session's connections: the network interface or
/// local address they are made from (CURLOPT_INTERFACE).
///
/// ```swift
/// configuration.localEndpoint = try .address("192.0.2.10")   // or .interface("eth1")
/// ```
public struct LocalEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// "if!name" or "host!address": libcurl's spelling, which never
    /// guesses whether a word is an interface or a host name.
    let curlValue: String

    public let description: String

    /// Why a local endpoint was refused.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let value: String
        public let reason: String
        public var description: String { "Local endpoint '\(value)': \(reason)" }
    }

    /// Connections leave through this interface (`eth0`; Linux binds with
    /// SO_BINDTODEVICE, which may need CAP_NET_RAW, else libcurl binds to
    /// the interface's address). A missing interface fails each task with
    /// `URLError(.cannotConnectToHost)` naming it.
    public static func interface(_ name: String) throws -> LocalEndpoint {
        // IFNAMSIZ is 16 with its NUL.
        guard !name.isEmpty, name.utf8.count < 16,
            name.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "/" && $0 != ":" })
        else {
            throw Problem(value: name, reason: "not an interface name (1 to 15 printable characters, no '/' or ':').")
        }
        return LocalEndpoint(curlValue: "if!" + name, description: name)
    }

    /// Connections are made from this local address (numeric IPv4 or IPv6;
    /// it must be one of the machine's). The port stays the system's choice.
    public static func address(_ address: String) throws -> LocalEndpoint {
        var v4 = in_addr()
        var v6 = in6_addr()
        guard inet_pton(AF_INET, address, &v4) == 1 || inet_pton(AF_INET6, address, &v6) == 1 else {
            throw Problem(value: address, reason: "not a numeric IPv4 or IPv6 address.")
        }
        return LocalEndpoint(curlValue: "host!" + address, description: address)
    }
}

/// Which IP versions a session's connections may use.
public enum IPVersionPolicy: Sendable, Hashable {
    /// Both, IPv6 first with IPv4 racing it after `happyEyeballsDelay`
    /// (libcurl's Happy Eyeballs).
    case any
    /// IPv4 only: a name with only IPv6 addresses fails with `.cannotFindHost`.
    case v4Only
    /// IPv6 only: a name with only IPv4 addresses, or an IPv4 literal in a
    /// URL, fails.
    case v6Only
}
