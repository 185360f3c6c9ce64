import Foundation

/// How far a compressed body (gzip, deflate, br, zstd) may grow when libcurl
/// decodes it: once more than `floor` bytes came out, at most `ratio` times
/// the bytes that came in. A few hundred bytes of gzip can decode to
/// gigabytes (a decompression bomb); without a limit such a body fills
/// memory through `data(for:)` or a completion handler before any size cap
/// on the collected body sees it, as that counts what came in.
package struct DecompressionLimit: Sendable, Equatable {
    package var ratio: Int
    package var floor: Int64

    package init(ratio: Int, floor: Int64) {
        self.ratio = ratio
        self.floor = floor
    }

    /// The error that ends a transfer whose body broke the limit, or nil.
    func violation(decoded: Int64, encoded: Int64, url: String) -> URLError? {
        guard decoded > floor else { return nil }
        let (allowed, overflow) = max(encoded, 1).multipliedReportingOverflow(by: Int64(ratio))
        guard !overflow, decoded > allowed else { return nil }
        return URLError.make(
            .cannotDecodeContentData, url: url,
            reason: "The response body decoded to \(decoded) bytes from \(encoded) compressed bytes, more than "
                + "maximumDecompressionRatio (\(ratio)) times as many, past \(floor) bytes: the transfer was stopped "
                + "as a possible decompression bomb. If the body is legitimate, raise maximumDecompressionRatio "
                + "in the session's configuration (0 turns the check off).")
    }
}
