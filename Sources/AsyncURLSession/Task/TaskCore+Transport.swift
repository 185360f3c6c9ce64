internal import CurlEngine
import Foundation

/// Commands about the current hop's exchange go to whoever runs it: the
/// engine, or the `LocalTransfer` of a hop answered without the network.
/// A bit of the id tells them apart, so engine hops pay one bit test.
/// Never call these under the task's lock: a local transfer's is taken.
extension TaskCore {
    func resumeReceivingTransfer(_ id: TransferID) {
        if id.isLocal {
            localTransfer(id)?.resumeReceiving()
        } else {
            engine.resumeReceiving(id, in: context.engineID)
        }
    }

    func suspendTransfer(_ id: TransferID) {
        if id.isLocal {
            localTransfer(id)?.suspend()
        } else {
            engine.suspend(id, in: context.engineID)
        }
    }

    func resumeTransfer(_ id: TransferID) {
        if id.isLocal {
            localTransfer(id)?.resume()
        } else {
            engine.resume(id, in: context.engineID)
        }
    }

    func cancelTransfer(_ id: TransferID, error: URLError) {
        if id.isLocal {
            localTransfer(id)?.cancel(error: error)
        } else {
            engine.cancel(id, in: context.engineID, error: error)
        }
    }

    private func localTransfer(_ id: TransferID) -> LocalTransfer? {
        guarded.withLock { $0.localTransfer?.id == id ? $0.localTransfer : nil }
    }

    /// Starts a hop answered by `responder` instead of the network.
    func launchLocalHop(_ request: URLRequest, responder: any LocalResponder, cache: HopCache?) {
        let id = TransferID.local()
        let transfer = LocalTransfer(id: id, delegate: self, fetchType: responder.fetchType)
        let started = guarded.withLock { guarded -> Bool? in
            guard guarded.pipeline.hopStarting() else { return nil }
            guarded.hop = HopState(request: request, credential: nil)
            guarded.hop.cache = cache
            guarded.transferID = id
            guarded.localTransfer = transfer
            guarded.pipeline.startedSending(expected: 0)
            return guarded.pipeline.state == .suspended
        }
        guard let suspended = started else { return }
        if suspended { transfer.suspend() }
        transfer.start(responder, request: request)
    }
}
