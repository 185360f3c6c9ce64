internal import CurlEngine

/// What the libcurl this process runs on offers, read from it at run time
/// (`curl_version_info`), as `curl -V` prints it: which protocols (HTTP/3
/// only where that libcurl has it; Debian 12's has none) and features
/// (Unix sockets, HTTP/2, alt-svc, ...) requests can use.
public enum NetworkLibrary {
    /// libcurl's version, e.g. "7.88.1".
    public static var version: String { LibcurlFeatures.current.version }
    /// Its TLS library, e.g. "OpenSSL/3.0.17"; nil when it has none.
    public static var tlsLibrary: String? { LibcurlFeatures.current.tlsLibrary }
    /// The URL schemes it speaks, e.g. ["dict", "file", ..., "http", "https", ...].
    public static var protocols: [String] { LibcurlFeatures.current.protocols }
    /// Its features as `curl -V` names them, e.g. ["alt-svc", "AsynchDNS", "HTTP2", "UnixSockets", ...].
    public static var features: [String] { LibcurlFeatures.current.features }
    /// Whether it can speak HTTP/3.
    public static var supportsHTTP3: Bool { LibcurlFeatures.current.supportsHTTP3 }
    /// Whether it can reach Unix domain sockets (`SessionConfiguration.unixSocket`).
    public static var supportsUnixSockets: Bool { LibcurlFeatures.current.supportsUnixSockets }
}
