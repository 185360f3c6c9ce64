internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One hop's metrics as the engine reported them, turned into
/// `TransactionMetrics` only when someone can read them.
struct PendingTransaction: Sendable {
    let metrics: TransferMetrics
    let request: URLRequest
    let response: ResponseSource?
    let fetchType: TransactionMetrics.FetchType

    init(
        metrics: TransferMetrics, request: URLRequest, response: ResponseSource?,
        fetchType: TransactionMetrics.FetchType = .networkLoad
    ) {
        self.metrics = metrics
        self.request = request
        self.response = response
        self.fetchType = fetchType
    }

    var transactionMetrics: TransactionMetrics {
        var converted = ResponseConversion.transactionMetrics(metrics, request: request, response: response?.response)
        converted.fetchType = fetchType
        return converted
    }
}
