import Foundation

/// A Unix domain socket that HTTP goes over instead of TCP: a Docker or
/// containerd socket, a sidecar's, systemd's, podman's.
///
/// ```swift
/// var configuration = SessionConfiguration.ephemeral
/// configuration.unixSocket = try .path("/var/run/docker.sock")
/// let (data, _) = try await Session(configuration: configuration)
///     .data(from: URL(string: "http://localhost/v1.43/containers/json")!)
/// ```
///
/// The URL's host then names nothing on the network: it is what the
/// request says it is for (the Host header, the name TLS checks over
/// `https`) and what cookies, the cache and credentials are kept under.
/// One request can go over a socket of its own with an `http+unix://` or
/// `https+unix://` URL whose host is the percent-encoded path, as
/// async-http-client spells it (`http+unix://%2Fvar%2Frun%2Fdocker.sock/v1.43/info`),
/// or with `SessionTask.unixSocket`. Connections are reused per socket.
public struct UnixSocket: Sendable, Hashable, CustomStringConvertible {
    /// The socket's path, or an abstract socket's name (without the NUL
    /// that begins it on the wire).
    public let path: String
    /// A Linux abstract socket (a name, not a file).
    public let isAbstract: Bool

    /// sun_path holds 108 bytes, the last a NUL for a path.
    static let maximumPathBytes = 107

    /// Why a socket path was refused.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "Unix socket '\(path)': \(reason)" }
    }

    /// A socket file. The path must not be empty, contain NUL, or be longer
    /// than 107 bytes (sun_path). Whether it exists is checked when a
    /// request uses it: a missing one fails that task with
    /// `URLError(.cannotConnectToHost)` naming the path.
    public static func path(_ path: String) throws -> UnixSocket {
        try check(path, limit: maximumPathBytes)
        return UnixSocket(path: path, isAbstract: false)
    }

    /// A Linux abstract socket (`@name` in `ss -x`): a name in the
    /// abstract namespace, no file.
    public static func abstract(_ name: String) throws -> UnixSocket {
        try check(name, limit: maximumPathBytes)  // sun_path less its leading NUL
        return UnixSocket(path: name, isAbstract: true)
    }

    private static func check(_ path: String, limit: Int) throws {
        guard !path.isEmpty else { throw Problem(path: path, reason: "the path is empty.") }
        guard !path.utf8.contains(0) else { throw Problem(path: path, reason: "the path contains NUL.") }
        guard path.utf8.count <= limit else {
            throw Problem(
                path: path,
                reason: "the path has \(path.utf8.count) bytes; a Unix socket's address holds at most \(limit) (sun_path).")
        }
    }

    public var description: String { isAbstract ? "@" + path : path }
}
