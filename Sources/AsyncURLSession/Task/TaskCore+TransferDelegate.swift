internal import CurlEngine
import Foundation

/// A task is the engine's delegate for each of its hops on the wire (or
/// the hop's `CacheStage` is, in front of it): see `EngineHopDelegate`. A
/// late call from a hop the task has already left is ignored there (`hopDid…`
/// compare it with `TaskMachine.transferID`). Until November 2026 an object per
/// hop carried that id: one more allocation per request.
extension TaskCore: EngineHopDelegate {}

extension TaskCore {
    func hopDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64, id: HopID) {
        let now = DispatchTime.now().uptimeNanoseconds
        let wake = guarded.withLock { guarded -> Wake? in
            guard guarded.transferID == id else { return nil }
            let delivery = guarded.pipeline.sentBody(
                totalBytesSent: totalBytesSent, totalBytesExpected: totalBytesExpected, now: now)
            updateProgress(&guarded)
            return guarded.wake(for: delivery)
        }
        wake?.run(by: self)
    }

    /// A 1xx (103 Early Hints, ...) before the final response: an event for
    /// an events consumer; nobody else asks for it, so nothing is built then.
    func hopDidReceiveInformationalHead(_ head: consuming ResponseHead, id: HopID) {
        let url = guarded.withLock { guarded -> URL? in
            guard guarded.transferID == id, guarded.pipeline.consumer == .events else { return nil }
            return guarded.hop.request.url
        }
        // Built outside the lock: Foundation's response is the slow part.
        guard let url, let response = ResponseSource(head: head, url: url).response else { return }
        let wake = guarded.withLock { guarded -> Wake? in
            guard guarded.transferID == id else { return nil }
            return guarded.wake(for: guarded.pipeline.offer(.informationalResponse(response)))
        }
        wake?.run(by: self)
    }
}
