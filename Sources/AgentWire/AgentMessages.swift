import Foundation

/// What a program asks of the agent. One request, one reply, in order, on
/// a connection (JSON in `AgentFrameEncoder` frames), except `attach`,
/// after which the agent only sends (`AgentReply.update`).
package enum AgentRequest: Sendable, Codable, Equatable {
    /// A transfer for background session `session`, its task `task`: a
    /// download, or an upload when the request names a body file. With
    /// `destination`, the agent moves the finished file there itself (for
    /// a program that will not come back for it, as `fetch --background`).
    case startDownload(session: String, task: Int, request: BackgroundRequest, destination: String?)
    /// Every transfer of this user, with progress.
    case status
    /// This connection holds background session `session` for its program
    /// (one program at a time: another is refused while it stays open). The
    /// reply is `attached`; then the agent sends an `update` whenever one
    /// of the session's transfers changes, until the connection closes.
    case attach(session: String)
    /// Stops transfer `id` for good (its task was cancelled).
    case cancel(id: Int64)
    /// The program took transfer `id`'s end (and its file): the agent
    /// forgets it and removes what is left of its files.
    case delivered(id: Int64)
}

/// The agent's answer to one request.
package enum AgentReply: Sendable, Codable, Equatable {
    /// The transfer's number in the agent's journal.
    case started(id: Int64)
    case status(agentProcess: Int32, transfers: [BackgroundTransferStatus])
    /// The request was refused; the text says why and what to do.
    case refused(String)
    /// The session is this connection's: the transfers it has that its
    /// program has not taken the end of (running, or ended while away).
    case attached(transfers: [BackgroundTransferStatus])
    /// `attach` refused: another program (this process ID) holds the session.
    case sessionInUse(byProcess: Int32)
    /// One of the attached session's transfers changed.
    case update(BackgroundTransferStatus)
    /// Done (cancel, delivered).
    case done
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
    /// The failure's `URLError.Code` raw value, when it failed on the network.
    package var failureCode: Int?
    /// The response the body came with, once it came.
    package var head: ResponseHeadRecord?
    /// The request as recorded (for a program that reconnects).
    package var request: BackgroundRequest?
    /// An upload's request body bytes sent so far, and how many it has
    /// (-1: unknown), while it is being sent; nil otherwise (and from an
    /// agent that does not say).
    package var bytesSent: Int64?
    package var expectedBytesToSend: Int64?

    package init(
        id: Int64, session: String, task: Int, url: String, phase: String, bytesOnDisk: Int64, expectedBytes: Int64,
        file: String?, failure: String?, failureCode: Int? = nil, head: ResponseHeadRecord? = nil,
        request: BackgroundRequest? = nil, bytesSent: Int64? = nil, expectedBytesToSend: Int64? = nil
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
        self.failureCode = failureCode
        self.head = head
        self.request = request
        self.bytesSent = bytesSent
        self.expectedBytesToSend = expectedBytesToSend
    }

    /// `phase` as the agent's journal names it (nil for a name this
    /// program does not know: a newer agent's).
    package var transferPhase: TransferPhase? { TransferPhase(rawValue: phase) }

    /// Whether the agent has nothing more to do for it.
    package var hasEnded: Bool { transferPhase.map { !$0.isLive } ?? false }
}
