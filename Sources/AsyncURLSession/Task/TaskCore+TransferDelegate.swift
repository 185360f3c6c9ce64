internal import CurlEngine
import Foundation

/// A task is the engine's delegate for each of its hops on the wire: each
/// call is forwarded to the task's `HopDelegate` side, which any exchange
/// (the engine's or a local one) reports to, naming the hop by `HopID`. A
/// late call from a hop the task has already left is ignored there (`hopDid…`
/// compare it with `Guarded.transferID`). Until November 2026 an object per
/// hop carried that id: one more allocation per request.
extension TaskCore: TransferDelegate {
    func transferDidReceiveHead(_ head: consuming ResponseHead, of id: TransferID) {
        hopDidReceiveHead(head, id: .engine(id))
    }

    func transferDidReceiveBody(_ bytes: UnsafeRawBufferPointer, of id: TransferID) -> BodyVerdict {
        hopDidReceiveBody(bytes, id: .engine(id))
    }

    func transferDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64, of id: TransferID) {
        hopDidSendBody(totalBytesSent: totalBytesSent, totalBytesExpected: totalBytesExpected, id: .engine(id))
    }

    func transferDidComplete(_ outcome: TransferOutcome, of id: TransferID) {
        hopDidComplete(outcome, id: .engine(id))
    }

    func transferDidReceiveInformationalHead(_ head: consuming ResponseHead, of id: TransferID) {
        hopDidReceiveInformationalHead(head, id: .engine(id))
    }
}

extension TaskCore {
    func hopDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64, id: HopID) {
        let now = DispatchTime.now().uptimeNanoseconds
        let wake = guarded.withLock { guarded -> Wake? in
            guard guarded.transferID == id else { return nil }
            let delivery = guarded.pipeline.sentBody(
                totalBytesSent: totalBytesSent, totalBytesExpected: totalBytesExpected, now: now)
            Self.updateProgress(&guarded)
            return Self.wake(for: delivery, in: &guarded)
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
            return Self.wake(for: guarded.pipeline.offer(.informationalResponse(response)), in: &guarded)
        }
        wake?.run(by: self)
    }
}
