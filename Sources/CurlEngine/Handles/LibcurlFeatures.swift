internal import CCurl

/// What the libcurl loaded at run time offers (`curl_version_info`), not
/// what the headers at build time said: a program built on Debian 12 may
/// run with another libcurl (one with HTTP/3, say).
package struct LibcurlFeatures: Sendable {
    /// "7.88.1".
    package let version: String
    /// The TLS library, e.g. "OpenSSL/3.0.17"; nil without TLS.
    package let tlsLibrary: String?
    /// URL schemes it speaks, as `curl -V` lists them ("http", "https", ...).
    package let protocols: [String]
    /// Feature names as `curl -V` lists them ("HTTP2", "UnixSockets", ...).
    package let features: [String]

    /// Read once: the answer cannot change while the process runs.
    package static let current = LibcurlFeatures()

    private init() {
        guard let info = curl_version_info(CURLVERSION_ELEVENTH) else {
            version = String(cString: curl_version())
            tlsLibrary = nil
            protocols = []
            features = []
            return
        }
        let data = info.pointee
        version = data.version.map { String(cString: $0) } ?? ""
        tlsLibrary = data.ssl_version.map { String(cString: $0) }
        protocols = Self.strings(data.protocols)
        // feature_names exists from the eleventh layout (7.87.0) on.
        features = data.age.rawValue >= CURLVERSION_ELEVENTH.rawValue ? Self.strings(data.feature_names) : []
    }

    /// A NULL-terminated array of C strings.
    private static func strings(_ list: UnsafePointer<UnsafePointer<CChar>?>?) -> [String] {
        guard let list else { return [] }
        var result: [String] = []
        var index = 0
        // Bounded: libcurl lists a few dozen at most.
        while index < 256, let entry = list[index] {
            result.append(String(cString: entry))
            index += 1
        }
        return result
    }

    package var supportsHTTP3: Bool { features.contains("HTTP3") }
    package var supportsUnixSockets: Bool { features.contains("UnixSockets") }
}
