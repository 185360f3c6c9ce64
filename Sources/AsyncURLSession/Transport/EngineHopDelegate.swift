internal import CurlEngine

/// Whatever hears a hop through `HopDelegate` (the task, or a stage in
/// front of it) hears an engine transfer the same way: each engine call is
/// the hop call of the same name, the hop named by the transfer's id.
protocol EngineHopDelegate: HopDelegate, TransferDelegate {}

extension EngineHopDelegate {
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
