internal import CCurl

/// The TLS versions a transfer may negotiate (nil: OpenSSL's default bound;
/// on Debian 12 that is TLS 1.2 at the least). Part of a handle's shape: a
/// recycled handle keeps CURLOPT_SSLVERSION, and libcurl reuses a pooled
/// connection only for a transfer whose TLS settings match it.
package struct TLSVersionBounds: Sendable, Equatable {
    package enum Version: Int, Sendable, Comparable {
        case v1_0, v1_1, v1_2, v1_3

        package static func < (lhs: Version, rhs: Version) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    package var minimum: Version?
    package var maximum: Version?

    package init(minimum: Version? = nil, maximum: Version? = nil) {
        self.minimum = minimum
        self.maximum = maximum
    }

    package var isDefault: Bool { minimum == nil && maximum == nil }

    /// CURLOPT_SSLVERSION's value: a minimum OR'd with a maximum.
    var curlValue: Int {
        (minimum?.curlCodes.minimum ?? CURL_SSLVERSION_DEFAULT)
            | (maximum?.curlCodes.maximum ?? CURL_SSLVERSION_MAX_DEFAULT)
    }
}

extension TLSVersionBounds.Version {
    /// libcurl's codes for this version as the lowest allowed and as the
    /// highest: one row per version, so the two bounds cannot disagree.
    fileprivate var curlCodes: (minimum: Int, maximum: Int) {
        switch self {
        case .v1_0: (CURL_SSLVERSION_TLSv1_0, CURL_SSLVERSION_MAX_TLSv1_0)
        case .v1_1: (CURL_SSLVERSION_TLSv1_1, CURL_SSLVERSION_MAX_TLSv1_1)
        case .v1_2: (CURL_SSLVERSION_TLSv1_2, CURL_SSLVERSION_MAX_TLSv1_2)
        case .v1_3: (CURL_SSLVERSION_TLSv1_3, CURL_SSLVERSION_MAX_TLSv1_3)
        }
    }
}
