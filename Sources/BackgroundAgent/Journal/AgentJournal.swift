import AgentWire
import Foundation

/// The journal for the agent's concurrent transfers: one actor in front of
/// the SQLite handle, which is not thread-safe.
package actor AgentJournal {
    private let journal: TransferJournal

    package init(at url: URL) throws(JournalError) {
        journal = try TransferJournal(at: url)
    }

    @discardableResult
    package func add(
        session: String, task: Int, kind: JournalEntry.Kind, request: BackgroundRequest, destination: String? = nil,
        now: Date = Date()
    ) throws(JournalError) -> JournalEntry {
        try journal.add(session: session, task: task, kind: kind, request: request, destination: destination, now: now)
    }

    package func move(
        _ id: Int64, to phase: TransferPhase, failure: String? = nil, failureCode: Int? = nil, resultFile: String? = nil
    ) throws(JournalError) {
        try journal.move(id, to: phase, failure: failure, failureCode: failureCode, resultFile: resultFile)
    }

    package func recordHead(_ id: Int64, _ head: ResponseHeadRecord) throws(JournalError) {
        try journal.recordHead(id, head)
    }

    package func remove(_ id: Int64) throws(JournalError) {
        try journal.remove(id)
    }

    package func ended(before date: Date) throws(JournalError) -> [JournalEntry] {
        try journal.ended(before: date)
    }

    package func recordProgress(
        _ id: Int64, bytesOnDisk: Int64, expectedBytes: Int64, validator: JournalValidator, partialFile: String?
    ) throws(JournalError) {
        try journal.recordProgress(
            id, bytesOnDisk: bytesOnDisk, expectedBytes: expectedBytes, validator: validator, partialFile: partialFile)
    }

    package func entry(id: Int64) throws(JournalError) -> JournalEntry? {
        try journal.entry(id: id)
    }

    package func entries(session: String? = nil) throws(JournalError) -> [JournalEntry] {
        try journal.entries(session: session)
    }
}
