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
        let (wake, progress) = guarded.withLock {
            $0.sentBody(totalBytesSent: totalBytesSent, totalBytesExpected: totalBytesExpected, now: now, id: id)
        }
        progress?.apply()
        wake?.run(by: self)
    }

    /// A 1xx (103 Early Hints, ...) before the final response: an event for
    /// an events consumer; nobody else asks for it, so nothing is built then.
    func hopDidReceiveInformationalHead(_ head: consuming ResponseHead, id: HopID) {
        let url = guarded.withLock { $0.informationalURL(of: id) }
        // Built outside the lock: Foundation's response is the slow part.
        guard let url, let response = ResponseSource(head: head, url: url).response else { return }
        let wake = guarded.withLock { $0.receivedInformational(response, id: id) }
        wake?.run(by: self)
    }
}
