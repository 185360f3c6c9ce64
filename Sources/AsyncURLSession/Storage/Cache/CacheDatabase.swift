internal import CSQLite
internal import SQLiteStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The disk half of a `ResponseCache`: one SQLite file (WAL journal), one
/// row per stored response. Why SQLite rather than files and a journal of
/// our own: every store is one transaction, so a crash or a full disk in
/// the middle of a write leaves the previous row or the new one, never a
/// torn body, and SQLite's own checks catch a damaged file. Apple's
/// URLCache keeps its disk cache the same way.
///
/// Not thread-safe: `ResponseCache` uses it from one serial queue only.
final class CacheDatabase {
    private let database: SQLiteConnection
    var url: URL { database.url }

    /// A row's metadata; the body is a column of its own.
    struct Record: Codable {
        var url: URL
        var statusCode: Int
        var httpVersion: String
        var fields: CachedHeaderFields
        var requestDate: Date
        var responseDate: Date
        var varyValues: [String: String?]
        var bodyLength: Int
    }

    struct Row {
        var key: String
        var size: Int
    }

    /// Opens (creating it 0600 if needed) the database at `url`, in a folder
    /// `StorageLocation.prepare` has checked. A file that is not a private
    /// regular file of ours is refused; one SQLite cannot read is replaced
    /// by an empty one (a cache loses nothing it cannot fetch again).
    /// - Returns: the database, and a problem worth reporting if any.
    static func open(at url: URL) -> (CacheDatabase?, String?) {
        if let problem = SQLiteConnection.preparePrivateFile(url) { return (nil, "\(problem); the disk cache is off") }
        let problem: String
        do { return (try CacheDatabase(url: url), nil) } catch { problem = error.reason }
        // Unreadable: start afresh, once.
        for suffix in ["", "-wal", "-shm"] { unlink(url.path + suffix) }
        if let again = SQLiteConnection.preparePrivateFile(url) { return (nil, "\(again); the disk cache is off") }
        do {
            return (try CacheDatabase(url: url), "the cache database \(url.path) could not be read (\(problem)) and was started afresh")
        } catch {
            return (nil, "cannot open the cache database \(url.path): \(error.reason); the disk cache is off")
        }
    }

    private init(url: URL) throws(SQLiteError) {
        database = try SQLiteConnection(at: url, busyTimeoutMilliseconds: 2000)
        try database.execute("""
            CREATE TABLE IF NOT EXISTS responses (
                key TEXT PRIMARY KEY NOT NULL,
                record BLOB NOT NULL,
                body BLOB NOT NULL,
                size INTEGER NOT NULL,
                stored REAL NOT NULL,
                accessed REAL NOT NULL);
            CREATE INDEX IF NOT EXISTS responses_accessed ON responses(accessed);
            SELECT count(*) FROM responses;
            """)
    }

    // MARK: - SQLite (the shared connection's plumbing, with the cache's errors)

    private var lastError: String { database.lastError }

    private func execute(_ sql: String) -> String? {
        do { try database.execute(sql) } catch { return error.reason }
        return nil
    }

    /// Runs `body` with a prepared statement, finalized after.
    private func withStatement<T>(_ sql: String, _ body: (OpaquePointer) throws(CacheDatabaseError) -> T) throws(CacheDatabaseError) -> T {
        try database.statement(sql, CacheDatabaseError.init, body)
    }

    private func bind(_ text: String, at index: Int32, in statement: OpaquePointer) {
        SQLiteConnection.bind(text, index, statement)
    }

    private func bind(_ data: Data, at index: Int32, in statement: OpaquePointer) {
        SQLiteConnection.bind(data, index, statement)
    }

    private func step(_ statement: OpaquePointer) throws(CacheDatabaseError) {
        guard database.step(statement) != nil else { throw CacheDatabaseError(lastError) }
    }

    private static func blob(_ statement: OpaquePointer, _ column: Int32) -> Data {
        SQLiteConnection.blob(statement, column)
    }

    // MARK: - Rows

    /// Every row's key and size, oldest access first (to rebuild the index).
    func rows() throws(CacheDatabaseError) -> [Row] {
        try withStatement("SELECT key, size FROM responses ORDER BY accessed") { statement throws(CacheDatabaseError) in
            var rows: [Row] = []
            while true {
                let result = sqlite3_step(statement)
                if result == SQLITE_DONE { break }
                guard result == SQLITE_ROW else { throw CacheDatabaseError(lastError) }
                guard let text = sqlite3_column_text(statement, 0) else { continue }
                rows.append(Row(key: String(cString: text), size: Int(sqlite3_column_int64(statement, 1))))
            }
            return rows
        }
    }

    func store(_ response: CachedResponse, key: String, now: Date) throws(CacheDatabaseError) {
        let record = Record(
            url: response.url, statusCode: response.statusCode, httpVersion: response.httpVersion,
            fields: response.fields, requestDate: response.requestDate, responseDate: response.responseDate,
            varyValues: response.varyValues, bodyLength: response.data.count)
        let encoded: Data
        do { encoded = try JSONEncoder().encode(record) } catch { throw CacheDatabaseError("cannot encode: \(error)") }
        try withStatement("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)") { statement throws(CacheDatabaseError) in
            bind(key, at: 1, in: statement)
            bind(encoded, at: 2, in: statement)
            bind(response.data, at: 3, in: statement)
            sqlite3_bind_int64(statement, 4, sqlite3_int64(response.cost))
            sqlite3_bind_double(statement, 5, now.timeIntervalSince1970)
            sqlite3_bind_double(statement, 6, now.timeIntervalSince1970)
            try step(statement)
        }
    }

    /// Stores several rows in one transaction (one WAL commit). A row that
    /// fails is skipped: a cache loses nothing it cannot fetch again.
    func store(_ writes: [(key: String, response: CachedResponse, now: Date)]) {
        guard writes.count > 1 else {
            if let write = writes.first { try? store(write.response, key: write.key, now: write.now) }
            return
        }
        let transaction = execute("BEGIN") == nil
        for write in writes { try? store(write.response, key: write.key, now: write.now) }
        if transaction, execute("COMMIT") != nil { _ = execute("ROLLBACK") }
    }

    /// The stored response for `key`; nil when there is none, or when its
    /// row does not hold together (then it is deleted).
    func load(key: String, now: Date) throws(CacheDatabaseError) -> CachedResponse? {
        let found = try withStatement("SELECT record, body FROM responses WHERE key = ?") {
            statement throws(CacheDatabaseError) -> (Data, Data)? in
            bind(key, at: 1, in: statement)
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { return nil }
            guard result == SQLITE_ROW else { throw CacheDatabaseError(lastError) }
            return (Self.blob(statement, 0), Self.blob(statement, 1))
        }
        guard let (recordData, body) = found else { return nil }
        guard let record = try? JSONDecoder().decode(Record.self, from: recordData), record.bodyLength == body.count else {
            try delete(key: key)
            return nil
        }
        try withStatement("UPDATE responses SET accessed = ? WHERE key = ?") { statement throws(CacheDatabaseError) in
            sqlite3_bind_double(statement, 1, now.timeIntervalSince1970)
            bind(key, at: 2, in: statement)
            try step(statement)
        }
        var response = CachedResponse(
            url: record.url, statusCode: record.statusCode, httpVersion: record.httpVersion, fields: record.fields,
            data: body, requestDate: record.requestDate, responseDate: record.responseDate)
        response.varyValues = record.varyValues
        return response
    }

    func delete(key: String) throws(CacheDatabaseError) {
        try withStatement("DELETE FROM responses WHERE key = ?") { statement throws(CacheDatabaseError) in
            bind(key, at: 1, in: statement)
            try step(statement)
        }
    }

    func deleteAll() throws(CacheDatabaseError) {
        if let problem = execute("DELETE FROM responses;") { throw CacheDatabaseError(problem) }
    }

    /// Keys of rows stored at or after `date`, deleted.
    func delete(storedSince date: Date) throws(CacheDatabaseError) {
        try withStatement("DELETE FROM responses WHERE stored >= ?") { statement throws(CacheDatabaseError) in
            sqlite3_bind_double(statement, 1, date.timeIntervalSince1970)
            try step(statement)
        }
    }

    /// Writes the WAL back into the main file (on `flush`).
    func checkpoint() {
        _ = execute("PRAGMA wal_checkpoint(TRUNCATE);")
    }
}

struct CacheDatabaseError: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
