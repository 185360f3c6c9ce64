import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A task's timings and sizes, as Apple's `URLSessionTaskMetrics`: one
/// transaction per request sent (one per redirect hop).
open class URLSessionTaskMetrics: NSObject, @unchecked Sendable {
    // @unchecked: every property is a `let` of Sendable values.
    public let transactionMetrics: [URLSessionTaskTransactionMetrics]
    public let taskInterval: DateInterval
    public let redirectCount: Int

    init(_ metrics: TaskMetrics) {
        transactionMetrics = metrics.transactionMetrics.map(URLSessionTaskTransactionMetrics.init)
        taskInterval = metrics.taskInterval
        redirectCount = metrics.redirectCount
    }
}

/// One request/response exchange, as Apple's `URLSessionTaskTransactionMetrics`.
open class URLSessionTaskTransactionMetrics: NSObject, @unchecked Sendable {
    // @unchecked: every property is a `let` of Sendable values.
    public let request: URLRequest
    public let response: URLResponse?
    public let fetchStartDate: Date?
    public let domainLookupStartDate: Date?
    public let domainLookupEndDate: Date?
    public let connectStartDate: Date?
    public let secureConnectionStartDate: Date?
    public let secureConnectionEndDate: Date?
    public let connectEndDate: Date?
    public let requestStartDate: Date?
    public let responseStartDate: Date?
    public let responseEndDate: Date?
    public let networkProtocolName: String?
    public let isReusedConnection: Bool
    public let remoteAddress: String?
    public let remotePort: Int?
    public let localAddress: String?
    public let localPort: Int?
    public let countOfRequestHeaderBytesSent: Int64
    public let countOfRequestBodyBytesSent: Int64
    public let countOfResponseHeaderBytesReceived: Int64
    public let countOfResponseBodyBytesReceived: Int64
    /// `.localCache` for a response the session's cache answered.
    public let resourceFetchType: ResourceFetchType

    public enum ResourceFetchType: Int, Sendable {
        case unknown
        case networkLoad
        case localCache
    }

    init(_ metrics: TransactionMetrics) {
        request = metrics.request
        response = metrics.response
        fetchStartDate = metrics.fetchStartDate
        domainLookupStartDate = metrics.domainLookupStartDate
        domainLookupEndDate = metrics.domainLookupEndDate
        connectStartDate = metrics.connectStartDate
        secureConnectionStartDate = metrics.secureConnectionStartDate
        secureConnectionEndDate = metrics.secureConnectionEndDate
        connectEndDate = metrics.connectEndDate
        requestStartDate = metrics.requestStartDate
        responseStartDate = metrics.responseStartDate
        responseEndDate = metrics.responseEndDate
        networkProtocolName = metrics.networkProtocolName
        isReusedConnection = metrics.isReusedConnection
        remoteAddress = metrics.remoteAddress
        remotePort = metrics.remotePort
        localAddress = metrics.localAddress
        localPort = metrics.localPort
        countOfRequestHeaderBytesSent = metrics.countOfRequestHeaderBytesSent
        countOfRequestBodyBytesSent = metrics.countOfRequestBodyBytesSent
        countOfResponseHeaderBytesReceived = metrics.countOfResponseHeaderBytesReceived
        countOfResponseBodyBytesReceived = metrics.countOfResponseBodyBytesReceived
        switch metrics.fetchType {
        case .networkLoad: resourceFetchType = .networkLoad
        case .localCache: resourceFetchType = .localCache
        }
    }
}
