internal import CSQLite
internal import SQLiteStore
import AgentWire
import AsyncURLSession
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The agent's record of every background transfer: request, phase,
/// validators, bytes on disk, files. What makes a transfer outlive a crash
/// of the program or of the agent.
///
/// Why SQLite (Debian's libsqlite3, WAL journal) rather than an append-only
/// log of our own with fsync: every change is one transaction, so `kill -9`
/// at any moment leaves the state before it or after it, never half a
/// record; updates in place need no compaction; a damaged file is detected
/// by SQLite's own checks. The response cache uses it the same way.
///
/// `synchronous=NORMAL` (`SQLiteConnection`): a power cut can lose the last
/// commits, which leaves an older state, which is safe: `bytesOnDisk` is
/// recorded after the partial file was flushed, so an older record only
/// means resuming from an earlier offset.
///
/// Not thread-safe: the agent uses it from one actor.
package final class TransferJournal {
    private let database: SQLiteConnection
    package var url: URL { database.url }

    /// Opens (creating it 0600) the journal at `url`, in a folder of ours.
    /// Transfers the journal says were running are `running` still: the
    /// caller resumes them (nothing else can be running after a start).
    package init(at url: URL) throws(JournalError) {
        if let problem = SQLiteConnection.preparePrivateFile(url) {
            throw JournalError("\(problem); move it away so the agent can start a journal")
        }
        do {
            database = try SQLiteConnection(at: url, busyTimeoutMilliseconds: 5000)
        } catch {
            throw JournalError("cannot open the journal \(url.path): \(error.reason); move it away to start afresh")
        }
        do {
            try execute("""
                CREATE TABLE IF NOT EXISTS transfers (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    session TEXT NOT NULL,
                    task INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    request BLOB NOT NULL,
                    phase TEXT NOT NULL,
                    entity_tag TEXT,
                    last_modified TEXT,
                    bytes_on_disk INTEGER NOT NULL DEFAULT 0,
                    expected_bytes INTEGER NOT NULL DEFAULT -1,
                    partial_file TEXT,
                    result_file TEXT,
                    destination TEXT,
                    failure TEXT,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    created REAL NOT NULL,
                    updated REAL NOT NULL,
                    UNIQUE (session, task));
                """)
            try migrate()
        } catch {
            throw JournalError("the journal \(url.path) cannot be used: \(error.description); move it away to start afresh")
        }
    }

    /// Columns added after the first journals were written (version 1: the
    /// final response's head and the failure's code, for reconnecting
    /// programs). A journal of an older agent gains them in one transaction.
    private func migrate() throws(JournalError) {
        let version = try statement("PRAGMA user_version") { statement throws(JournalError) -> Int64 in
            guard database.step(statement) == true else { throw JournalError(lastError) }
            return SQLiteConnection.integer(statement, 0) ?? 0
        }
        guard version < 1 else { return }
        try transaction { () throws(JournalError) in
            try execute("""
                ALTER TABLE transfers ADD COLUMN response_head BLOB;
                ALTER TABLE transfers ADD COLUMN failure_code INTEGER;
                PRAGMA user_version = 1;
                """)
        }
    }

    // MARK: - Changes

    /// Records a new transfer, queued. Fails when the session already has a
    /// task with that identifier.
    @discardableResult
    package func add(
        session: String, task: Int, kind: JournalEntry.Kind, request: BackgroundRequest, destination: String? = nil,
        now: Date = Date()
    ) throws(JournalError) -> JournalEntry {
        let encoded: Data
        do { encoded = try JSONEncoder().encode(request) } catch {
            throw JournalError("cannot encode the request: \(error)")
        }
        let id = try statement("""
            INSERT INTO transfers (session, task, kind, request, phase, created, updated, destination)
            VALUES (?, ?, ?, ?, 'queued', ?, ?, ?)
            """) { statement throws(JournalError) -> Int64 in
            bind(session, 1, statement)
            sqlite3_bind_int64(statement, 2, sqlite3_int64(task))
            bind(kind.rawValue, 3, statement)
            bind(encoded, 4, statement)
            sqlite3_bind_double(statement, 5, now.timeIntervalSince1970)
            sqlite3_bind_double(statement, 6, now.timeIntervalSince1970)
            bind(destination, 7, statement)
            guard sqlite3_step(statement) == SQLITE_DONE else {
                // SQLITE_CONSTRAINT_UNIQUE, (19 | 8 << 8), a macro Swift does not import.
                if database.lastExtendedErrorCode == SQLITE_CONSTRAINT | 8 << 8 {
                    throw JournalError("session \"\(session)\" already has a task \(task)")
                }
                throw JournalError("cannot record the transfer: \(lastError)")
            }
            return database.lastInsertedRowID
        }
        guard let entry = try entry(id: id) else { throw JournalError("the transfer just recorded is missing") }
        return entry
    }

    /// Moves transfer `id` to `phase`; a move the phase does not allow
    /// (`TransferPhase.allows`) is refused and changes nothing.
    package func move(
        _ id: Int64, to phase: TransferPhase, failure: String? = nil, failureCode: Int? = nil, resultFile: String? = nil,
        now: Date = Date()
    ) throws(JournalError) {
        try transaction { () throws(JournalError) in
            guard let current = try entry(id: id) else { throw JournalError("no transfer \(id) in the journal") }
            guard current.phase.allows(phase) else {
                throw JournalError("transfer \(id) cannot go from \(current.phase.rawValue) to \(phase.rawValue)")
            }
            try statement("""
                UPDATE transfers SET phase = ?, failure = coalesce(?, failure), result_file = coalesce(?, result_file),
                    attempts = attempts + ?, updated = ?, failure_code = coalesce(?, failure_code) WHERE id = ?
                """) { statement throws(JournalError) in
                bind(phase.rawValue, 1, statement)
                bind(failure, 2, statement)
                bind(resultFile, 3, statement)
                sqlite3_bind_int(statement, 4, phase == .running ? 1 : 0)
                sqlite3_bind_double(statement, 5, now.timeIntervalSince1970)
                if let failureCode { sqlite3_bind_int64(statement, 6, sqlite3_int64(failureCode)) } else { sqlite3_bind_null(statement, 6) }
                sqlite3_bind_int64(statement, 7, id)
                try step(statement)
            }
        }
    }

    /// Records how far a download got: call after flushing the partial file
    /// (`bytesOnDisk` is what a resume keeps).
    package func recordProgress(
        _ id: Int64, bytesOnDisk: Int64, expectedBytes: Int64, validator: JournalValidator, partialFile: String?,
        now: Date = Date()
    ) throws(JournalError) {
        try statement("""
            UPDATE transfers SET bytes_on_disk = ?, expected_bytes = ?, entity_tag = ?, last_modified = ?,
                partial_file = ?, updated = ? WHERE id = ?
            """) { statement throws(JournalError) in
            sqlite3_bind_int64(statement, 1, bytesOnDisk)
            sqlite3_bind_int64(statement, 2, expectedBytes)
            bind(validator.entityTag, 3, statement)
            bind(validator.lastModified, 4, statement)
            bind(partialFile, 5, statement)
            sqlite3_bind_double(statement, 6, now.timeIntervalSince1970)
            sqlite3_bind_int64(statement, 7, id)
            try step(statement)
        }
    }

    /// Records the head of the response whose body the file holds (not
    /// that of a 206 continuing it): what a reconnecting program is told.
    package func recordHead(_ id: Int64, _ head: ResponseHeadRecord) throws(JournalError) {
        let encoded: Data
        do { encoded = try JSONEncoder().encode(head) } catch {
            throw JournalError("cannot encode the response head: \(error)")
        }
        try statement("UPDATE transfers SET response_head = ? WHERE id = ?") { statement throws(JournalError) in
            bind(encoded, 1, statement)
            sqlite3_bind_int64(statement, 2, id)
            try step(statement)
        }
    }

    package func remove(_ id: Int64) throws(JournalError) {
        try statement("DELETE FROM transfers WHERE id = ?") { statement throws(JournalError) in
            sqlite3_bind_int64(statement, 1, id)
            try step(statement)
        }
    }

    // MARK: - Reading

    package func entry(id: Int64) throws(JournalError) -> JournalEntry? {
        try entries(where: "id = ?") { sqlite3_bind_int64($0, 1, id) }.first
    }

    /// Every transfer, or one session's, oldest first.
    package func entries(session: String? = nil) throws(JournalError) -> [JournalEntry] {
        guard let session else { return try entries(where: "1") { _ in } }
        return try entries(where: "session = ?") { bind(session, 1, $0) }
    }

    /// Transfers that ended (or were delivered) before `date`: what the
    /// agent removes, with their files, when nobody came for them.
    package func ended(before date: Date) throws(JournalError) -> [JournalEntry] {
        try entries(where: "phase IN ('finished', 'failed', 'cancelled', 'delivered') AND updated < ?") {
            sqlite3_bind_double($0, 1, date.timeIntervalSince1970)
        }
    }

    private func entries(where condition: String, _ bindings: (OpaquePointer) -> Void) throws(JournalError) -> [JournalEntry] {
        try statement("""
            SELECT id, session, task, kind, request, phase, entity_tag, last_modified, bytes_on_disk, expected_bytes,
                partial_file, result_file, failure, attempts, created, updated, destination, response_head, failure_code
            FROM transfers WHERE \(condition) ORDER BY id
            """) { statement throws(JournalError) -> [JournalEntry] in
            bindings(statement)
            var found: [JournalEntry] = []
            while true {
                let result = sqlite3_step(statement)
                if result == SQLITE_DONE { break }
                guard result == SQLITE_ROW else { throw JournalError("cannot read the journal: \(lastError)") }
                found.append(try Self.entry(statement))
            }
            return found
        }
    }

    private static func entry(_ statement: OpaquePointer) throws(JournalError) -> JournalEntry {
        let id = sqlite3_column_int64(statement, 0)
        guard let kind = JournalEntry.Kind(rawValue: text(statement, 3) ?? ""),
            let phase = TransferPhase(rawValue: text(statement, 5) ?? "")
        else { throw JournalError("transfer \(id) in the journal has an unknown kind or phase") }
        let request: BackgroundRequest
        do { request = try JSONDecoder().decode(BackgroundRequest.self, from: blob(statement, 4)) } catch {
            throw JournalError("transfer \(id) in the journal has a request that does not decode: \(error)")
        }
        return JournalEntry(
            id: id, session: text(statement, 1) ?? "", task: Int(sqlite3_column_int64(statement, 2)), kind: kind,
            request: request, phase: phase,
            validator: JournalValidator(entityTag: text(statement, 6), lastModified: text(statement, 7)),
            bytesOnDisk: sqlite3_column_int64(statement, 8), expectedBytes: sqlite3_column_int64(statement, 9),
            partialFile: text(statement, 10), resultFile: text(statement, 11), failure: text(statement, 12),
            attempts: Int(sqlite3_column_int64(statement, 13)),
            created: Date(timeIntervalSince1970: sqlite3_column_double(statement, 14)),
            updated: Date(timeIntervalSince1970: sqlite3_column_double(statement, 15)),
            destination: text(statement, 16),
            responseHead: sqlite3_column_type(statement, 17) == SQLITE_NULL
                ? nil : try? JSONDecoder().decode(ResponseHeadRecord.self, from: blob(statement, 17)),
            failureCode: sqlite3_column_type(statement, 18) == SQLITE_NULL
                ? nil : Int(sqlite3_column_int64(statement, 18)))
    }

    // MARK: - SQLite (the shared connection's plumbing, with this journal's errors)

    private var lastError: String { database.lastError }

    private func execute(_ sql: String) throws(JournalError) {
        do { try database.execute(sql) } catch { throw JournalError(error.reason) }
    }

    private func transaction(_ body: () throws(JournalError) -> Void) throws(JournalError) {
        try database.transaction(JournalError.init, body)
    }

    private func statement<T>(_ sql: String, _ body: (OpaquePointer) throws(JournalError) -> T) throws(JournalError) -> T {
        try database.statement(sql, { JournalError("cannot prepare a journal statement: \($0)") }, body)
    }

    private func step(_ statement: OpaquePointer) throws(JournalError) {
        guard database.step(statement) == false else { throw JournalError("cannot write the journal: \(lastError)") }
    }

    private func bind(_ text: String?, _ index: Int32, _ statement: OpaquePointer) {
        SQLiteConnection.bind(text, index, statement)
    }

    private func bind(_ data: Data, _ index: Int32, _ statement: OpaquePointer) {
        SQLiteConnection.bind(data, index, statement)
    }

    private static func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
        SQLiteConnection.text(statement, column)
    }

    private static func blob(_ statement: OpaquePointer, _ column: Int32) -> Data {
        SQLiteConnection.blob(statement, column)
    }
}

/// Why the journal refused or failed a change; says what to do where it can.
package struct JournalError: Error, CustomStringConvertible, Equatable {
    package let description: String
    package init(_ description: String) { self.description = description }
}
