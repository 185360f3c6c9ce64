import AgentWire
import Foundation
import Testing
@testable import BackgroundAgent
#if canImport(Glibc)
import Glibc
#endif

/// The background agent's journal, as the agent uses it: record, move,
/// reopen after the process is gone.
@Suite struct TransferJournalTests {
    private func scratchFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private let request = BackgroundRequest(
        method: "GET", url: "http://127.0.0.1:8080/large", headers: [["Accept", "*/*"], ["X-Two", "a"], ["X-Two", "b"]])

    @Test func aRecordedTransfer_readsBackTheSame_afterReopening() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("journal.sqlite")
        let id: Int64
        do {
            let journal = try TransferJournal(at: url)
            let entry = try journal.add(session: "com.example.sync", task: 7, kind: .download, request: request)
            id = entry.id
            try journal.move(id, to: .running)
            try journal.recordProgress(
                id, bytesOnDisk: 65_536, expectedBytes: 1 << 20,
                validator: JournalValidator(entityTag: "\"v1\"", lastModified: "Wed, 25 Nov 2026 10:00:00 GMT"),
                partialFile: folder.appendingPathComponent("7.partial").path)
        }
        let reopened = try TransferJournal(at: url)
        let entry = try #require(try reopened.entry(id: id))
        #expect(entry.session == "com.example.sync" && entry.task == 7 && entry.kind == .download)
        #expect(entry.request == request)
        #expect(entry.phase == .running)
        #expect(entry.attempts == 1)
        #expect(entry.bytesOnDisk == 65_536 && entry.expectedBytes == 1 << 20)
        #expect(entry.validator == JournalValidator(entityTag: "\"v1\"", lastModified: "Wed, 25 Nov 2026 10:00:00 GMT"))
        #expect(entry.partialFile?.hasSuffix("7.partial") == true)
    }

    @Test func theJournalFile_isPrivate_andWriteAheadLogged() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("journal.sqlite")
        let journal = try TransferJournal(at: url)
        try journal.add(session: "s", task: 1, kind: .download, request: request)
        for suffix in ["", "-wal"] {
            var info = stat()
            try #require(stat(url.path + suffix, &info) == 0, "\(url.path + suffix) is missing")
            #expect(info.st_mode & 0o777 == 0o600, "\(url.lastPathComponent + suffix) is \(String(info.st_mode & 0o777, radix: 8))")
        }
    }

    @Test func aMoveThePhaseDoesNotAllow_isRefused_andChangesNothing() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let journal = try TransferJournal(at: folder.appendingPathComponent("journal.sqlite"))
        let id = try journal.add(session: "s", task: 1, kind: .download, request: request).id
        #expect(throws: JournalError.self) { try journal.move(id, to: .finished) }
        #expect(try journal.entry(id: id)?.phase == .queued)
        try journal.move(id, to: .running)
        try journal.move(id, to: .finished, resultFile: "/somewhere/file")
        #expect(throws: JournalError.self) { try journal.move(id, to: .running) }
        #expect(throws: JournalError.self) { try journal.move(id, to: .cancelled) }
        try journal.move(id, to: .delivered)
        let entry = try #require(try journal.entry(id: id))
        #expect(entry.phase == .delivered && entry.resultFile == "/somewhere/file")
    }

    @Test func aSecondTaskWithTheSameIdentifier_inOneSession_isRefused() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let journal = try TransferJournal(at: folder.appendingPathComponent("journal.sqlite"))
        try journal.add(session: "s", task: 1, kind: .download, request: request)
        let error = #expect(throws: JournalError.self) {
            try journal.add(session: "s", task: 1, kind: .upload, request: request)
        }
        #expect(error?.description.contains("already has a task 1") == true)
        try journal.add(session: "other", task: 1, kind: .download, request: request)
        #expect(try journal.entries(session: "s").count == 1)
        #expect(try journal.entries().count == 2)
    }

    @Test func endedTransfers_areFoundByAge_forRemoval() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let journal = try TransferJournal(at: folder.appendingPathComponent("journal.sqlite"))
        let old = Date(timeIntervalSinceNow: -8 * 86_400)
        let finished = try journal.add(session: "s", task: 1, kind: .download, request: request, now: old).id
        try journal.move(finished, to: .running, now: old)
        try journal.move(finished, to: .finished, now: old)
        let live = try journal.add(session: "s", task: 2, kind: .download, request: request, now: old).id
        let recent = try journal.add(session: "s", task: 3, kind: .download, request: request).id
        try journal.move(recent, to: .cancelled)
        let expired = try journal.ended(before: Date(timeIntervalSinceNow: -7 * 86_400))
        #expect(expired.map(\.id) == [finished])
        #expect(try journal.entry(id: live)?.phase == .queued)
        try journal.remove(finished)
        #expect(try journal.entry(id: finished) == nil)
    }

    @Test func aFileThatIsNotAJournal_isRefused_withWhatToDo() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("journal.sqlite")
        let garbage = open(url.path, O_WRONLY | O_CREAT, 0o600)
        _ = "not a database, not at all, just text that goes on".withCString { write(garbage, $0, strlen($0)) }
        close(garbage)
        let error = #expect(throws: JournalError.self) { _ = try TransferJournal(at: url) }
        #expect(error?.description.contains("move it away") == true)
    }

    /// What a killed agent leaves: its connection never closed, the log
    /// never checkpointed into the main file. Another connection (the next
    /// agent) sees every committed change. (The agent killed for real, mid
    /// transfer, is tested with the agent executable.)
    @Test func committedChanges_areThere_withoutAClose() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("journal.sqlite")
        let writer = try TransferJournal(at: url)
        let id = try writer.add(session: "s", task: 1, kind: .download, request: request).id
        try writer.move(id, to: .running)
        try writer.recordProgress(
            id, bytesOnDisk: 4096, expectedBytes: 8192, validator: JournalValidator(entityTag: "\"e\""), partialFile: nil)
        let next = try TransferJournal(at: url)
        let entry = try #require(try next.entry(id: id))
        #expect(entry.phase == .running && entry.bytesOnDisk == 4096 && entry.validator.entityTag == "\"e\"")
        withExtendedLifetime(writer) {}
    }
}
