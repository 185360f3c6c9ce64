import Foundation

/// Timings and sizes of one transfer, read from libcurl when it completes.
/// Durations are seconds from the start of the transfer (libcurl's *_TIME_T,
/// which are cumulative), nil where the phase did not happen.
package struct TransferMetrics: Sendable {
    package var fetchStart: Date
    package var domainLookup: Double?
    package var connect: Double?
    package var secureConnection: Double?
    package var requestStart: Double?
    package var firstByte: Double?
    package var total: Double
    package var httpVersion: String?
    package var reusedConnection: Bool
    package var remoteAddress: String?
    package var remotePort: Int?
    package var localAddress: String?
    package var localPort: Int?
    package var requestHeaderBytes: Int64
    package var requestBodyBytes: Int64
    package var responseHeaderBytes: Int64
    package var responseBodyBytes: Int64

    package static func empty(fetchStart: Date) -> TransferMetrics {
        TransferMetrics(
            fetchStart: fetchStart, domainLookup: nil, connect: nil, secureConnection: nil,
            requestStart: nil, firstByte: nil, total: 0, httpVersion: nil, reusedConnection: false,
            remoteAddress: nil, remotePort: nil, localAddress: nil, localPort: nil,
            requestHeaderBytes: 0, requestBodyBytes: 0, responseHeaderBytes: 0, responseBodyBytes: 0)
    }
}
