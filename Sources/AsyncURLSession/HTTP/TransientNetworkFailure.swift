import Foundation

extension URLError.Code {
    /// A failure of the network, not of the request: another attempt can
    /// succeed. What makes a failed download resumable (with its resume
    /// data) and a background transfer worth retrying; each adds its own.
    package var isTransientNetworkFailure: Bool {
        switch self {
        case .networkConnectionLost, .timedOut, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed,
            .notConnectedToInternet:
            return true
        default:
            return false
        }
    }
}
