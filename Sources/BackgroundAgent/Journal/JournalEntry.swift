import AgentWire
import Foundation

/// What identifies the bytes a partial download holds: a resumed request
/// sends them (If-Range), and a server whose resource changed answers with
/// the whole body, which starts the file again.
package struct JournalValidator: Sendable, Equatable {
    package var entityTag: String?
    package var lastModified: String?

    package init(entityTag: String? = nil, lastModified: String? = nil) {
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    package var isEmpty: Bool { entityTag == nil && lastModified == nil }
}

/// One background transfer as the journal holds it.
package struct JournalEntry: Sendable, Equatable {
    package enum Kind: String, Sendable, Codable { case download, upload }

    package var id: Int64
    /// The background session's identifier.
    package var session: String
    /// The task's identifier within that session (as its program knows it).
    package var task: Int
    package var kind: Kind
    package var request: BackgroundRequest
    package var phase: TransferPhase
    package var validator: JournalValidator
    /// How many bytes of the body the partial file holds, flushed to disk
    /// before this was recorded: a resume truncates the file to this.
    package var bytesOnDisk: Int64
    /// The body's length when the server said it; -1 when not.
    package var expectedBytes: Int64
    package var partialFile: String?
    /// The finished download, waiting to be handed to its program.
    package var resultFile: String?
    /// Why it failed, for its program.
    package var failure: String?
    package var attempts: Int
    package var created: Date
    package var updated: Date
    /// Where the agent moves the finished file itself (a program that will
    /// not come back for it); nil: its program takes it.
    package var destination: String?
    /// The head of the response whose body the file holds.
    package var responseHead: ResponseHeadRecord?
    /// The failure's `URLError.Code` raw value, when it failed on the network.
    package var failureCode: Int?
}
