internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

enum ResponseConversion {
    /// Builds Foundation's response from the engine's head. Repeated fields are
    /// joined with ", " as HTTPURLResponse does (RFC 9110 §5.3).
    static func httpResponse(_ head: ResponseHead, url: URL) -> HTTPURLResponse? {
        // A response has a dozen fields or so: comparing each name with the
        // earlier ones byte by byte is cheaper than lowercasing and hashing
        // every name into a second dictionary.
        let received = head.fields
        var fields: [String: String] = [:]
        fields.reserveCapacity(received.count)
        for index in received.indices {
            let first = received.firstIndex(sameNameAs: index)
            if first < index {
                let name = received.name(at: first)
                fields[name] = fields[name, default: ""] + ", " + received.value(at: index)
            } else {
                fields[received.name(at: index)] = received.value(at: index)
            }
        }
        return HTTPURLResponse(url: url, statusCode: head.statusCode, httpVersion: head.httpVersion, headerFields: fields)
    }

    /// One hop's metrics, from libcurl's cumulative timers (seconds since the
    /// hop's start) turned into dates.
    static func transactionMetrics(
        _ metrics: TransferMetrics, request: URLRequest, response: HTTPURLResponse?
    ) -> TransactionMetrics {
        let start = metrics.fetchStart
        func date(_ offset: Double?) -> Date? { offset.map { start.addingTimeInterval($0) } }
        return TransactionMetrics(
            request: request,
            response: response,
            fetchStartDate: start,
            domainLookupStartDate: metrics.domainLookup == nil ? nil : start,
            domainLookupEndDate: date(metrics.domainLookup),
            connectStartDate: metrics.connect == nil ? nil : date(metrics.domainLookup) ?? start,
            connectEndDate: date(metrics.connect),
            secureConnectionStartDate: metrics.secureConnection == nil ? nil : date(metrics.connect),
            secureConnectionEndDate: date(metrics.secureConnection),
            requestStartDate: date(metrics.requestStart),
            responseStartDate: date(metrics.firstByte),
            responseEndDate: metrics.total > 0 ? start.addingTimeInterval(metrics.total) : nil,
            networkProtocolName: metrics.httpVersion,
            isReusedConnection: metrics.reusedConnection,
            remoteAddress: metrics.remoteAddress,
            remotePort: metrics.remotePort,
            localAddress: metrics.localAddress,
            localPort: metrics.localPort,
            countOfRequestHeaderBytesSent: metrics.requestHeaderBytes,
            countOfRequestBodyBytesSent: metrics.requestBodyBytes,
            countOfResponseHeaderBytesReceived: metrics.responseHeaderBytes,
            countOfResponseBodyBytesReceived: metrics.responseBodyBytes)
    }
}
