/// Where a background transfer is in its life, and the moves it may make:
/// the agent's journal keeps it, and programs read it from the agent's
/// status messages (`TransferStatus.transferPhase`).
///
/// queued ─▶ running ─▶ finished ─┐
///              │  ▲              ├─▶ delivered (its program has heard the end)
///              ▼  │              │
///        waitingToRetry ─▶ failed┤
///   (any live phase) ─▶ cancelled┘
///
/// `running` after a crash of the agent is `interrupted` when the journal is
/// read again: nothing is running then, the transfer resumes from its bytes
/// on disk.
package enum TransferPhase: String, Sendable, Codable, CaseIterable {
    case queued
    case running
    /// A network error: tried again after a pause, until the resource timeout.
    case waitingToRetry
    case finished
    case failed
    case cancelled
    /// The program that owns it received its end: kept only until its files
    /// are gone.
    case delivered

    /// Whether the transfer still has work to do.
    package var isLive: Bool {
        switch self {
        case .queued, .running, .waitingToRetry: return true
        case .finished, .failed, .cancelled, .delivered: return false
        }
    }

    /// Whether `next` is a move this phase may make.
    package func allows(_ next: TransferPhase) -> Bool {
        switch (self, next) {
        case (.queued, .running), (.running, .waitingToRetry), (.waitingToRetry, .running),
            (.running, .finished), (.running, .failed), (.waitingToRetry, .failed),
            (.finished, .delivered), (.failed, .delivered), (.cancelled, .delivered):
            return true
        // A crash left it running: starting it again is a move to running.
        case (.running, .running):
            return true
        case (_, .cancelled):
            return isLive
        default:
            return false
        }
    }
}
