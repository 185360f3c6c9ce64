import Foundation

/// What other threads ask of the engine thread.
enum EngineCommand: Sendable {
    case openSession(EngineSessionID, EngineSessionOptions)
    case closeSession(EngineSessionID)
    /// Pool metrics for a session made without them (see `MultiSession.observePool`).
    case observePool(EngineSessionID, any ConnectionPoolObserver)
    /// The Bool: whether anyone can read the transfer's metrics (see `Transfer.collectsMetrics`).
    case start(TransferID, TransferPlacement, TransferRequest, collectsMetrics: Bool, any TransferDelegate)
    case suspend(TransferID, EngineSessionID)
    case resume(TransferID, EngineSessionID)
    case resumeReceiving(TransferID, EngineSessionID)
    case resumeSending(TransferID, EngineSessionID)
    case cancel(TransferID, EngineSessionID, URLError)
    /// Raw streams (a connect-only transfer's connection, see `RawStream`).
    case streamSend(TransferID, Data)
    case streamResumeReading(TransferID)
    case streamClose(TransferID)
    /// Half-close: no more bytes will be sent (after the queued ones).
    case streamCloseWrite(TransferID)
    /// A Swift job for `EngineExecutor`, enqueued off the engine thread.
    case runJob(UnownedJob)
}

extension EngineCommand {
    var isStart: Bool {
        if case .start = self { return true }
        return false
    }
}
