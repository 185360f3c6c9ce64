import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What URLSessionTaskMetrics reports: the task's interval and one
/// transaction per request sent (one per redirect hop).
public struct TaskMetrics: Sendable {
    public var taskInterval: DateInterval
    public var redirectCount: Int
    public var transactionMetrics: [TransactionMetrics]
}

/// One request/response exchange, as URLSessionTaskTransactionMetrics.
/// Dates are nil for phases that did not happen (no DNS or connect on a
/// reused connection).
public struct TransactionMetrics: Sendable {
    public var request: URLRequest
    public var response: HTTPURLResponse?
    public var fetchStartDate: Date
    public var domainLookupStartDate: Date?
    public var domainLookupEndDate: Date?
    public var connectStartDate: Date?
    public var connectEndDate: Date?
    public var secureConnectionStartDate: Date?
    public var secureConnectionEndDate: Date?
    public var requestStartDate: Date?
    public var responseStartDate: Date?
    public var responseEndDate: Date?
    /// ALPN name: "http/1.1", "h2".
    public var networkProtocolName: String?
    public var isReusedConnection: Bool
    public var remoteAddress: String?
    public var remotePort: Int?
    public var localAddress: String?
    public var localPort: Int?
    public var countOfRequestHeaderBytesSent: Int64
    public var countOfRequestBodyBytesSent: Int64
    public var countOfResponseHeaderBytesReceived: Int64
    public var countOfResponseBodyBytesReceived: Int64
    /// Where the response came from (URLSessionTaskTransactionMetrics'
    /// resourceFetchType).
    public var fetchType: FetchType = .networkLoad

    public enum FetchType: Sendable, Equatable {
        /// Sent and answered over the network (a 304 revalidation too).
        case networkLoad
        /// Answered from the response cache; nothing was sent.
        case localCache
    }
}
