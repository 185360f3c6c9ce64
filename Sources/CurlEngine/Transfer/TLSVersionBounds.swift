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
        let low: Int
        switch minimum {
        case nil: low = CURL_SSLVERSION_DEFAULT
        case .v1_0?: low = CURL_SSLVERSION_TLSv1_0
        case .v1_1?: low = CURL_SSLVERSION_TLSv1_1
        case .v1_2?: low = CURL_SSLVERSION_TLSv1_2
        case .v1_3?: low = CURL_SSLVERSION_TLSv1_3
        }
        let high: Int
        switch maximum {
        case nil: high = CURL_SSLVERSION_MAX_DEFAULT
        case .v1_0?: high = CURL_SSLVERSION_MAX_TLSv1_0
        case .v1_1?: high = CURL_SSLVERSION_MAX_TLSv1_1
        case .v1_2?: high = CURL_SSLVERSION_MAX_TLSv1_2
        case .v1_3?: high = CURL_SSLVERSION_MAX_TLSv1_3
        }
        return low | high
    }
}
