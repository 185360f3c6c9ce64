internal import CSQLite
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
    private var handle: OpaquePointer?
    let url: URL

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
        var info = stat()
        if lstat(url.path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == getuid() else {
                return (nil, "\(url.path) is not a regular file of ours; the disk cache is off")
            }
            if info.st_mode & 0o077 != 0, chmod(url.path, 0o600) != 0 {
                return (nil, "\(url.path) is open to other users and cannot be made private; the disk cache is off")
            }
        } else if let problem = createPrivateFile(url) {
            return (nil, problem)
        }
        let database = CacheDatabase(url: url)
        if let problem = database.connect() {
            database.disconnect()
            // Unreadable: start afresh, once.
            for suffix in ["", "-wal", "-shm"] { unlink(url.path + suffix) }
            if let problem = createPrivateFile(url) { return (nil, problem) }
            let fresh = CacheDatabase(url: url)
            if let second = fresh.connect() {
                fresh.disconnect()
                return (nil, "cannot open the cache database \(url.path): \(second); the disk cache is off")
            }
            return (fresh, "the cache database \(url.path) could not be read (\(problem)) and was started afresh")
        }
        return (database, nil)
    }

    /// SQLite would create the file with the umask's mode: it is made 0600
    /// first (its journal files take the same mode).
    private static func createPrivateFile(_ url: URL) -> String? {
        let fd = Glibc.open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            return "cannot create \(url.path): \(String(cString: strerror(errno))); the disk cache is off"
        }
        close(fd)
        return nil
    }

    private init(url: URL) {
        self.url = url
    }

    deinit { disconnect() }

    private func connect() -> String? {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        guard sqlite3_open_v2(url.path, &handle, flags, nil) == SQLITE_OK else { return lastError }
        sqlite3_busy_timeout(handle, 2000)
        return execute("""
            PRAGMA journal_mode=WAL;
            PRAGMA synchronous=NORMAL;
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

    private func disconnect() {
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    private var lastError: String {
        handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
    }

    private func execute(_ sql: String) -> String? {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &message) == SQLITE_OK else {
            defer { sqlite3_free(message) }
            return message.map { String(cString: $0) } ?? lastError
        }
        return nil
    }

    /// Runs `body` with a prepared statement, finalized after.
    private func withStatement<T>(_ sql: String, _ body: (OpaquePointer) throws(CacheDatabaseError) -> T) throws(CacheDatabaseError) -> T {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw CacheDatabaseError(lastError)
        }
        defer { sqlite3_finalize(statement) }
        return try body(statement)
    }

    private func bind(_ text: String, at index: Int32, in statement: OpaquePointer) {
        sqlite3_bind_text(statement, index, text, -1, csqlite_transient())
    }

    private func bind(_ data: Data, at index: Int32, in statement: OpaquePointer) {
        data.withUnsafeBytes { bytes in
            // A non-nil pointer even for an empty body: nil would bind NULL.
            var zero: UInt8 = 0
            let pointer = bytes.baseAddress ?? withUnsafePointer(to: &zero) { UnsafeRawPointer($0) }
            _ = sqlite3_bind_blob64(statement, index, pointer, sqlite3_uint64(bytes.count), csqlite_transient())
        }
    }

    private func step(_ statement: OpaquePointer) throws(CacheDatabaseError) {
        let result = sqlite3_step(statement)
        guard result == SQLITE_DONE || result == SQLITE_ROW else { throw CacheDatabaseError(lastError) }
    }

    private static func blob(_ statement: OpaquePointer, _ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: bytes, count: count)
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
