import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What happens to a task, in the order SPEC §3 gives, as `task.events`
/// yields it. The stream finishes after the last event, or throws the task's
/// error (a `URLError`).
///
/// New kinds of event are added as the library grows (redirect and challenge
/// decisions, upload and download progress, the downloaded file): switch with
/// a `default:` case.
public enum TaskEvent: Sendable {
    /// A 3xx with a Location. Answer the decision (follow, follow another
    /// request, stop) or let the default apply when you pull the next event.
    case redirect(RedirectDecision)
    /// The server or a proxy asks for credentials (401/407).
    case challenge(ChallengeDecision)
    /// The request body must be provided as a stream (first send of a
    /// streamed upload, or a re-send after a redirect or challenge).
    case needBodyStream(BodyStreamDecision)
    /// Request body bytes handed to the connection. Expected is -1 for a
    /// stream without a length. Unpulled progress events merge. A consumer
    /// waiting for the next event gets at most one per 50 ms (counted from
    /// the first bytes sent) and the last of a body of known length, so a
    /// body sent within 50 ms reports once; `bytes` counts everything sent
    /// since the previous one.
    case uploadProgress(TransferProgress)
    /// A download made from resume data continues at `offset` (0 when the
    /// server sent the whole body again). Comes before the response.
    case resumed(offset: Int64, expectedTotal: Int64)
    /// Body bytes written to the download's file (at most every 64 KiB or
    /// 50 ms, plus the last). Expected is -1 when unknown.
    case downloadProgress(TransferProgress)
    /// The finished download's file. It exists until you pull the next event,
    /// and is deleted then unless you moved it.
    case downloaded(URL)
    /// An informational (1xx) response other than 101, such as 103 Early
    /// Hints: the final `response` still follows. Only an events consumer
    /// gets it.
    case informationalResponse(HTTPURLResponse)
    /// The final response head (never a 1xx), before any `data`. The decision
    /// lets you cancel (default: allow).
    case response(HTTPURLResponse, ResponseDecision)
    /// The next piece of the body, in order; the pieces concatenate to the body.
    case data(Data)
    /// The fields the response sent after its body (a chunked HTTP/1.1
    /// body's trailer section, or HTTP/2's), after the last `data` and
    /// before `metrics`; only when it sent some and the body arrived whole.
    case trailers(ResponseTrailers)
    /// The session's cache is about to store the response (after the last
    /// `data`, before `metrics`): keep it, change it or refuse it. Only for
    /// a response the cache may store, never for one it served.
    case willCacheResponse(CacheDecision)
    /// Timings and sizes of the task, just before the stream ends.
    case metrics(TaskMetrics)
    /// The task could not connect and waits for connectivity, retrying
    /// (`SessionConfiguration.waitsForConnectivity`): once per task. It
    /// continues with the other events when a retry connects, or fails
    /// with `.timedOut` once the resource timeout has passed.
    case waitingForConnectivity
    /// An attempt ended and, by the task's `RetryPolicy`, another follows
    /// after `attempt.delay` seconds: what came of the last one is not
    /// delivered (its failure, or its 429/503 response). Only tasks with a
    /// retry policy see it.
    case retrying(RetryAttempt)
}

/// How far a body has moved: this step, the total so far, the total expected
/// (-1 when unknown).
public struct TransferProgress: Sendable, Equatable {
    public var bytes: Int64
    public var totalBytes: Int64
    public var totalBytesExpected: Int64

    public init(bytes: Int64, totalBytes: Int64, totalBytesExpected: Int64) {
        self.bytes = bytes
        self.totalBytes = totalBytes
        self.totalBytesExpected = totalBytesExpected
    }

    func merged(with newer: TransferProgress) -> TransferProgress {
        TransferProgress(
            bytes: bytes + newer.bytes, totalBytes: newer.totalBytes, totalBytesExpected: newer.totalBytesExpected)
    }
}

extension TaskEvent {
    /// Bytes this event holds in the stream's buffer (its weight for backpressure).
    var bufferedByteCount: Int {
        if case .data(let data) = self { return data.count }
        return 0
    }
}
