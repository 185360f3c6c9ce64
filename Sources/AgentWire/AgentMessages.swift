import Foundation

/// What a program asks of the agent. One request, one reply, in order, on
/// a connection (JSON in `AgentFrameEncoder` frames).
package enum AgentRequest: Sendable, Codable, Equatable {
    /// A download for background session `session`, its task `task`. With
    /// `destination`, the agent moves the finished file there itself (for
    /// a program that will not come back for it, as `fetch --background`).
    case startDownload(session: String, task: Int, request: BackgroundRequest, destination: String?)
    /// Every transfer of this user, with progress.
    case status
}

/// The agent's answer to one request.
package enum AgentReply: Sendable, Codable, Equatable {
    /// The transfer's number in the agent's journal.
    case started(id: Int64)
    case status(agentProcess: Int32, transfers: [BackgroundTransferStatus])
    /// The request was refused; the text says why and what to do.
    case refused(String)
}

/// One transfer as `status` reports it.
package struct BackgroundTransferStatus: Sendable, Codable, Equatable {
    package var id: Int64
    package var session: String
    package var task: Int
    package var url: String
    /// The journal's phase: queued, running, waitingToRetry, finished, failed, cancelled, delivered.
    package var phase: String
    package var bytesOnDisk: Int64
    /// -1 when unknown.
    package var expectedBytes: Int64
    /// Where the finished file is (or was delivered).
    package var file: String?
    package var failure: String?

    package init(
        id: Int64, session: String, task: Int, url: String, phase: String, bytesOnDisk: Int64, expectedBytes: Int64,
        file: String?, failure: String?
    ) {
        self.id = id
        self.session = session
        self.task = task
        self.url = url
        self.phase = phase
        self.bytesOnDisk = bytesOnDisk
        self.expectedBytes = expectedBytes
        self.file = file
        self.failure = failure
    }
}
