import AgentWire
import Foundation
import Logging
import Testing
@testable import BackgroundAgent
#if canImport(Glibc)
import Glibc
#endif

/// What the agent keeps when nobody comes back: ended transfers and their
/// files go after the retention time, live ones and recent ends stay.
@Suite struct RetentionSweepTests {
    @Test func endedTransfersNobodyTook_areForgottenWithTheirFiles_afterTheRetention() async throws {
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("sweep-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let agent = try TransferAgent(folder: folder, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        // The agent's journal, opened a second time (SQLite allows it) to write the past.
        let journal = try TransferJournal(at: folder.appendingPathComponent("journal.sqlite"))
        let request = BackgroundRequest(method: "GET", url: "http://127.0.0.1:9/file")
        let tenDaysAgo = Date().addingTimeInterval(-10 * 86_400)
        let old = try journal.add(session: "s", task: 1, kind: .download, request: request, now: tenDaysAgo)
        try journal.move(old.id, to: .running, now: tenDaysAgo)
        try journal.move(old.id, to: .finished, resultFile: "x", now: tenDaysAgo)
        let recent = try journal.add(session: "s", task: 2, kind: .download, request: request)
        try journal.move(recent.id, to: .running)
        try journal.move(recent.id, to: .failed, failure: "gone")
        let live = try journal.add(session: "s", task: 3, kind: .download, request: request, now: tenDaysAgo)
        let oldFile = folder.appendingPathComponent("transfers/\(old.id).download")
        try Data("left".utf8).write(to: oldFile)

        let forgotten = await agent.sweep(retention: 7 * 86_400)

        #expect(forgotten == 1)
        #expect(try journal.entry(id: old.id) == nil)
        #expect(!FileManager.default.fileExists(atPath: oldFile.path))
        #expect(try journal.entry(id: recent.id) != nil)
        #expect(try journal.entry(id: live.id)?.phase == .queued)
    }
}
