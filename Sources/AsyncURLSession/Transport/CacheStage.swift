internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session's response cache as a stage around one hop's transport.
///
/// In front of it, `plan(for:…)` decides how the hop starts: answered from
/// the cache, sent as is, or sent with conditions to revalidate what is
/// stored. Behind it, the stage stands between the hop's exchange (the
/// engine's or a local one) and the task: it is the exchange's delegate,
/// sees each head and body byte first, and hands the task only what the
/// task's consumer is to see.
/// - A 304 that revalidated the stored response is absorbed, head and body:
///   the stored response, brought up to date, answers once the hop ends.
/// - A success to an unsafe method removes the URL's stored response.
/// - A storable response's body is copied as the task accepts it (bytes the
///   task refuses, to pause, come again and are copied then).
///
/// At the hop's good end the task asks `takeEnd()`: the stored response to
/// answer with, or a response to offer for storing (`willCacheResponse`).
/// Hops without a cache have no stage and pay nothing; a hop with one pays
/// this object, and no lock: see `hop`.
final class CacheStage: @unchecked Sendable {
    // @unchecked: `hop` and `url` are changed without a lock, and that is
    // safe because their accesses never overlap. The exchange calls the
    // stage one call at a time (the engine thread, or a local responder's
    // writes, each awaited before the next), and the task reads the stage's
    // end only after the exchange's last call, `hopDidComplete`: on that
    // call's thread, or later on another one after taking the task's lock,
    // which that call took after the stage's last change. A lock here was
    // three more acquisitions per request in every session with a cache
    // (the default configuration has one): before the stage, the cache's
    // state lived under the task's lock, taken for the head and body anyway.

    /// The next stage: the task's hop side, as any hop's exchange sees it.
    private let task: any LocalTransferDelegate
    /// Whether the hop sent a credential (authenticated responses are
    /// stored only when they say they may be).
    private let authenticated: Bool
    private var hop: HopCache
    /// Where the exchange ended, when a local responder followed redirects
    /// itself (`hopMoved`); else the hop's request URL.
    private var url: URL?

    init(_ hop: HopCache, url: URL?, authenticated: Bool, task: any LocalTransferDelegate) {
        self.task = task
        self.authenticated = authenticated
        self.hop = hop
        self.url = url
    }

    /// What the hop's end has for the task: a revalidated stored response
    /// to answer with, or a captured one to offer for storing.
    enum End {
        case answerWithStored(CachedResponse)
        case offerForStoring(CachedResponse)
    }

    /// Whether the hop's end has anything for the cache (most have not: a
    /// `no-store` response, nothing stored). Read under the task's lock.
    var hasWorkAtEnd: Bool { hop.hasWorkAtEnd }

    /// At the hop's good end: what the task does next, once.
    func takeEnd() -> End? {
        if let stored = hop.takeNotModified() { return .answerWithStored(stored) }
        guard let url, let captured = hop.takeCaptured(url: url) else { return nil }
        return .offerForStoring(captured)
    }

    /// Stores `response` as the answer to the hop's request (as the server saw it).
    func store(_ response: CachedResponse) {
        hop.cache.storeCachedResponse(response, for: hop.request)
    }

    // MARK: - The hop's events, on their way to the task

    func hopDidReceiveHead(_ head: consuming ResponseHead, id: HopID) {
        let inputs = CacheHeadInputs(head)
        let verdict = url.map { url in
            hop.receivedHead(
                statusCode: inputs.status, httpVersion: inputs.version, fields: inputs.fields,
                contentLength: inputs.length, url: url, authenticated: authenticated, mayBeHeld: inputs.mayBeHeld)
        }
        switch verdict {
        case .swallowNotModified?:
            task.hopAbsorbedHead(head, id: id)
        case .invalidate(let url)?:
            hop.cache.removeCachedResponse(for: url)
            task.hopDidReceiveHead(head, id: id)
        case .deliver?, nil:
            task.hopDidReceiveHead(head, id: id)
        }
    }

    func hopDidReceiveBody(_ bytes: UnsafeRawBufferPointer, id: HopID) -> BodyVerdict {
        // A 304 that revalidated has no body of its own to deliver.
        if hop.notModified != nil { return .accepted }
        let verdict = task.hopDidReceiveBody(bytes, id: id)
        if hop.capture != nil, case .accepted = verdict { hop.receivedBody(bytes) }
        return verdict
    }

    func hopDidReceiveInformationalHead(_ head: consuming ResponseHead, id: HopID) {
        task.hopDidReceiveInformationalHead(head, id: id)
    }

    func hopDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64, id: HopID) {
        task.hopDidSendBody(totalBytesSent: totalBytesSent, totalBytesExpected: totalBytesExpected, id: id)
    }

    func hopDidComplete(_ outcome: TransferOutcome, id: HopID) {
        task.hopDidComplete(outcome, id: id)
    }

    func hopAbsorbedHead(_ head: consuming ResponseHead, id: HopID) {
        task.hopAbsorbedHead(head, id: id)
    }
}

/// The engine's transfer reports through the stage.
extension CacheStage: EngineHopDelegate {}

/// A local exchange (a `LocalTransport`'s responder) reports through it too;
/// what only a local hop asks goes straight on to the task.
extension CacheStage: LocalTransferDelegate {
    func offerLocalChallenge(_ decision: ChallengeDecision) {
        task.offerLocalChallenge(decision)
    }

    func adoptLocalBody(_ source: URL, length: Int64, id: HopID) -> LocalBodyAdoption {
        // A body that never passes as bytes cannot be copied: deliver them.
        .notAdoptable
    }

    func reportDownloadProgress(total: Int64, expected: Int64, id: HopID) {
        task.reportDownloadProgress(total: total, expected: expected, id: id)
    }

    func hopMoved(to url: URL, id: HopID) {
        self.url = url
        task.hopMoved(to: url, id: id)
    }
}
