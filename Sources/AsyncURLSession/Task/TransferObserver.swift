internal import CurlEngine
import Foundation

/// The engine's delegate for one hop of a task. Knowing its transfer id lets
/// the task ignore a late callback from a hop it has already left.
final class TransferObserver: TransferDelegate {
    let core: TaskCore
    let id: TransferID

    init(core: TaskCore, id: TransferID) {
        self.core = core
        self.id = id
    }

    func transferDidReceiveHead(_ head: consuming ResponseHead) {
        core.hopDidReceiveHead(head, id: id)
    }

    func transferDidReceiveBody(_ bytes: UnsafeRawBufferPointer) -> BodyVerdict {
        core.hopDidReceiveBody(bytes, id: id)
    }

    func transferDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64) {
        let now = DispatchTime.now().uptimeNanoseconds
        let wake = core.guarded.withLock { guarded -> TaskCore.Wake? in
            guard guarded.transferID == id else { return nil }
            let delivery = guarded.pipeline.sentBody(
                totalBytesSent: totalBytesSent, totalBytesExpected: totalBytesExpected, now: now)
            TaskCore.updateProgress(&guarded)
            return TaskCore.wake(for: delivery, in: &guarded)
        }
        wake?.run()
    }

    func transferDidComplete(_ outcome: TransferOutcome) {
        core.hopDidComplete(outcome, id: id)
    }
}
