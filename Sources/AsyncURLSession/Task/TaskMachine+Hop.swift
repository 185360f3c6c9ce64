internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The engine's side of the machine: what a hop's head, body and end do to
/// the task. Each method first asks whether the callback is the current
/// hop's (`transferID`); a late call of a hop the task has left changes
/// nothing.
extension TaskMachine {
    /// What `hopDidReceiveHead` reads of the hop under its one lock.
    struct HeadCheck {
        let url: URL
        let fromCache: Bool
        let consumer: PublishedConsumer
        /// Set when the head could be decided under that lock.
        var verdict: HopState.HeadVerdict?
    }

    /// A head of hop `id`: the common case (a status never held back) is
    /// decided here, and with `publishesAtOnce` (nothing to do between the
    /// verdict and the publication) a collected body's response is published
    /// too. Nil for a hop the task has left.
    mutating func checkHead(
        _ head: borrowing ResponseHead, id: HopID, publishesAtOnce: Bool
    ) -> (HeadCheck, PublishedResponse?)? {
        guard transferID == id, let url = hop.request.url else { return nil }
        var check = HeadCheck(url: url, fromCache: exchange?.fetchType == .localCache, consumer: PublishedConsumer(self))
        var published: PublishedResponse?
        if !HopState.mayHold(status: head.statusCode), retry?.holds(head.statusCode) != true {
            let verdict = hop.receivedUnholdableHead(ResponseSource(head: copy head, url: url))
            check.verdict = verdict
            if publishesAtOnce, !check.consumer.events, !check.consumer.download, case .deliver(let source) = verdict {
                published = publish(source, decision: nil, heldBody: nil, afterHandlers: false)
            }
        }
        return (check, published)
    }

    /// A head `checkHead` could not decide (a status a redirect, challenge
    /// or retry may hold): the hop's verdict on it.
    mutating func receivedHead(
        _ source: ResponseSource, id: HopID, redirectsAsFoundationNetworking: Bool,
        isSensitiveHeader: (String) -> Bool
    ) -> HopState.HeadVerdict? {
        guard transferID == id else { return nil }
        return hop.receivedHead(
            source, redirectsAsFoundationNetworking: redirectsAsFoundationNetworking,
            retryable: retry?.heldStatuses ?? [], sensitive: isSensitiveHeader)
    }

    /// The URL of hop `id`'s request, if it is the current hop.
    func currentURL(of id: HopID) -> URL? {
        transferID == id ? hop.request.url : nil
    }

    /// Hop `id`'s exchange ended at `url` (see `HopState.moved(to:)`).
    mutating func hopMoved(to url: URL, id: HopID) {
        guard transferID == id else { return }
        hop.moved(to: url)
    }

    /// Upload progress of hop `id`.
    mutating func sentBody(
        totalBytesSent: Int64, totalBytesExpected: Int64, now: UInt64, id: HopID
    ) -> (Wake?, ProgressUpdate?) {
        guard transferID == id else { return (nil, nil) }
        let delivery = pipeline.sentBody(totalBytesSent: totalBytesSent, totalBytesExpected: totalBytesExpected, now: now)
        return (wake(for: delivery), progressUpdate())
    }

    /// The URL an informational head of hop `id` is built with, when an
    /// events consumer (the only one who sees them) waits.
    func informationalURL(of id: HopID) -> URL? {
        guard transferID == id, pipeline.consumer == .events else { return nil }
        return hop.request.url
    }

    /// An informational response (1xx) for the events consumer.
    mutating func receivedInformational(_ response: HTTPURLResponse, id: HopID) -> Wake? {
        guard transferID == id else { return nil }
        return wake(for: pipeline.offer(.informationalResponse(response)))
    }

    // MARK: - Publishing the response

    /// Publishes the final response to the pipeline (and a download's file
    /// position), with the body a decision held back.
    mutating func publish(
        _ source: ResponseSource, decision: ResponseDecision?, heldBody: Data?, afterHandlers: Bool
    ) -> PublishedResponse {
        var result = PublishedResponse()
        if download != nil, let response = source.response, let resumed = downloadResponseArrived(response) {
            result.wake = wake(for: pipeline.offer(resumed))
        }
        let delivery = pipeline.receivedResponse(source, decision: decision)
        if result.wake == nil { result.wake = wake(for: delivery) }
        if let heldBody {
            let (delivery, error) = pipeline.receivedHeldBody(heldBody)
            result.bodyError = error
            if result.wake == nil { result.wake = wake(for: delivery) }
        }
        result.progress = progressUpdate()
        if afterHandlers, pipeline.openBodyGate() { result.resumeReceiving = exchange }
        // A hop that ended before (or as) its response was published.
        if let end = publication.published() { result.pendingEnd = (end, hop.held) }
        result.collecting = pipeline.consumer != .events
        return result
    }

    /// Handlers (or middleware) decide on the response: body bytes wait
    /// behind the gate, and a hop end waits for the publication.
    mutating func responseGoesToHandlers() {
        pipeline.closeBodyGate()
        publication.handlersStarted()
    }

    // MARK: - The hop's end

    /// Hop `id` ended with `outcome`. `quiet`: nobody logs or traces the
    /// task, so a plain end finishes it here, in this lock acquisition.
    mutating func hopEnded(_ outcome: TransferOutcome, id: HopID, quiet: Bool, originalURL: URL?) -> HopEndStep {
        guard let exchange = endHop(id) else { return .stale }
        // Turned into TransactionMetrics only if someone can read them
        // (building them needs Foundation's response). A handshake stopped
        // for a trust decision is not a transaction: the hop starts again.
        if outcome.tlsChallenge == nil, metricsReadable {
            history.record(PendingTransaction(
                metrics: outcome.metrics, request: hop.request,
                response: hop.held.map { ResponseSource($0.response) } ?? pipeline.responseSource,
                fetchType: exchange.fetchType))
        }
        // Only the final response's trailers reach the consumer (not those
        // of a redirect or a 401 held for a decision).
        if let fields = outcome.trailers, outcome.error == nil, hop.held == nil {
            pipeline.receivedTrailers(ResponseTrailers(fields))
        }
        var end: HopEnd = outcome.tlsChallenge.map { .tlsChallenge($0) } ?? outcome.error.map { .failure($0) } ?? .success
        if let methods = outcome.proxyAuthenticationMethods, let error = outcome.error {
            end = .proxyRefusedConnect(methods.map(TaskCore.challengeName), error)
        }
        // A cancel() that came while this transfer was ending missed it
        // (the engine had let it go): no retry, no next hop, no decision
        // follows; the task ends cancelled.
        if let cancellation = cancellationUnderWay { end = .failure(cancellation) }
        // The response is not published yet: end after it.
        if publication.hopEnded(end) == .heldUntilPublished { return .waitsForPublication }
        // The common end (a success with nothing held, cached, written to a
        // file or waited for) is read here, in the same lock acquisition.
        if case .success = end, hop.held == nil, hop.cacheStage?.hasWorkAtEnd != true, download == nil,
            resumeData.isEmpty
        {
            let readable = metricsReadable
            if quiet, !readable {
                return .finished(finish(error: nil, metrics: nil, originalURL: originalURL))
            }
            return .plain(PlainEnd(
                transactions: readable ? history.transactions : [], redirectCount: history.redirectCount,
                metricsReadable: readable))
        }
        return .decide(end, hop.held)
    }

    /// The task ends: the consumer to wake, if any. Every task error names
    /// the request that failed, under both of Apple's keys, whichever path
    /// made it.
    mutating func finish(error: URLError?, metrics: TaskMetrics?, originalURL: URL?) -> Wake? {
        taskEnded()
        let error = error?.namingFailingURL(hop.request.url ?? originalURL)
        return wake(for: pipeline.finish(error: error, metrics: metrics))
    }

    /// The error a task ending now ends with: its cancellation if one is
    /// under way.
    var cancellationUnderWay: URLError? {
        pipeline.isCanceling ? pipeline.cancellation : nil
    }
}

/// What a hop's end leaves to the driver (`TaskMachine.hopEnded`).
enum HopEndStep {
    /// A hop the task has left: nothing to do.
    case stale
    /// The response is not published yet: its publication ends the hop.
    case waitsForPublication
    /// The task ended in the machine (a plain end nobody observes).
    case finished(TaskCore.Wake?)
    /// A plain success: the driver builds the metrics and completes.
    case plain(PlainEnd)
    /// Anything else: the policies above the hop decide what follows.
    case decide(HopEnd, HopState.Held?)

    var isCurrent: Bool {
        if case .stale = self { return false }
        return true
    }
}

/// What a plain hop end read for `TaskCore.endPlainly`.
struct PlainEnd {
    let transactions: [PendingTransaction]
    let redirectCount: Int
    let metricsReadable: Bool
}

/// What publishing a response under the lock leaves to do after it.
struct PublishedResponse {
    var wake: TaskCore.Wake?
    var progress: ProgressUpdate?
    var bodyError: URLError?
    var resumeReceiving: (any HopExchange)?
    var pendingEnd: (HopEnd, HopState.Held?)?
    var collecting = false
}

/// Who a published response goes to: an events consumer (which gets a
/// decision and Foundation's response at once) and whether the body goes to
/// a file. Neither changes while a response is being published.
struct PublishedConsumer {
    let events: Bool
    let download: Bool

    init(_ guarded: borrowing TaskMachine) {
        events = guarded.pipeline.consumer == .events
        download = guarded.download != nil
    }
}
