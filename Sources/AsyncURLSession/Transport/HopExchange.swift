internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one seam between a task and whoever answers its current hop: the
/// engine (`EngineExchange`, a libcurl transfer) or a responder that is not
/// the network (`LocalTransfer`: a stub, a URLProtocol class, the response
/// cache's replay, the background agent). Both report back through the
/// task's `HopDelegate` methods (the engine through its `TransferDelegate`,
/// which the task forwards), naming the hop by `id`; the task steers the
/// hop through this protocol and never asks which kind it has.
///
/// Never call these under the task's lock: a local transfer takes its own.
protocol HopExchange: Sendable {
    /// Names the hop in the delegate calls it makes, so a late call of a
    /// hop the task has left is told from the current one.
    var id: HopID { get }
    /// Where the answer comes from, for the hop's metrics.
    var fetchType: TransactionMetrics.FetchType { get }
    /// Both directions paused (`SessionTask.suspend()`).
    func suspend()
    func resume()
    /// The task's consumer has room again after a `.pause` verdict.
    func resumeReceiving()
    func cancel(error: URLError)
    /// A consumer about to park before the body's first byte: the engine
    /// may run the hop on this thread for a moment (`CurlEngine.waitInline`);
    /// other exchanges return at once.
    func waitInline(until isDone: () -> Bool)
    /// A request body read by the responder itself reached `sent` bytes
    /// (of `expected`, -1: unknown). The engine reports its uploads through
    /// the delegate, so an engine hop has nothing to do here.
    func reportSent(_ sent: Int64, expected: Int64)
}

/// A hop on the wire: an engine transfer. Two words, so a task holds it in
/// its `any HopExchange` without allocating.
struct EngineExchange: HopExchange {
    let transfer: TransferID
    let session: EngineSessionID

    var id: HopID { .engine(transfer) }
    var fetchType: TransactionMetrics.FetchType { .networkLoad }
    func suspend() { CurlEngine.shared.suspend(transfer, in: session) }
    func resume() { CurlEngine.shared.resume(transfer, in: session) }
    func resumeReceiving() { CurlEngine.shared.resumeReceiving(transfer, in: session) }
    func cancel(error: URLError) { CurlEngine.shared.cancel(transfer, in: session, error: error) }
    func waitInline(until isDone: () -> Bool) { CurlEngine.shared.waitInline(for: transfer, until: isDone) }
    func reportSent(_ sent: Int64, expected: Int64) {}
}

extension LocalTransfer: HopExchange {
    func waitInline(until isDone: () -> Bool) {}
}

/// What any hop's exchange tells its task: the same calls as the engine's
/// `TransferDelegate`, naming the hop by `HopID`.
protocol HopDelegate: AnyObject, Sendable {
    /// A 1xx (103 Early Hints, ...) before the final response.
    func hopDidReceiveInformationalHead(_ head: consuming ResponseHead, id: HopID)
    func hopDidReceiveHead(_ head: consuming ResponseHead, id: HopID)
    func hopDidReceiveBody(_ bytes: UnsafeRawBufferPointer, id: HopID) -> BodyVerdict
    func hopDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64, id: HopID)
    func hopDidComplete(_ outcome: TransferOutcome, id: HopID)
    /// A head a stage in front of the task kept from it (a 304 that
    /// revalidated a stored response, which answers instead): nothing for
    /// the consumer, but what every head from the network teaches.
    func hopAbsorbedHead(_ head: consuming ResponseHead, id: HopID)
}

/// What a hop answered without the network asks of its task beyond what an
/// engine transfer does: its responder's own challenge, a body written to a
/// file elsewhere (the background agent's downloads), and redirects the
/// responder followed itself.
protocol LocalTransferDelegate: HopDelegate {
    /// Offers `decision` as a network 401's would be; the answer settles it.
    func offerLocalChallenge(_ decision: ChallengeDecision)
    /// A download takes the whole file at `source` instead of its bytes.
    func adoptLocalBody(_ source: URL, length: Int64, id: HopID) -> LocalBodyAdoption
    /// How far a body written elsewhere got, as download progress.
    func reportDownloadProgress(total: Int64, expected: Int64, id: HopID)
    /// The exchange ended at `url`: the responder followed redirects itself.
    func hopMoved(to url: URL, id: HopID)
}

/// What became of a body file offered to the task (`adoptLocalBody`).
enum LocalBodyAdoption {
    /// Taken: its move is queued in order with the file's writes (wait for
    /// its `flush` before the source may go).
    case adopted(DownloadFile)
    /// The task holds bodies back now (a response decision is pending).
    case pause
    /// Not a download that can take a whole file: deliver the bytes.
    case notAdoptable
    case abort(URLError)
}
