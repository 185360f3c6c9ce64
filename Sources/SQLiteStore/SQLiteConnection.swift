internal import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One SQLite connection to a private file of this user's, in WAL mode,
/// with the plumbing every store here needs (the response cache's
/// database, the background agent's journal): the file made 0600 before
/// SQLite creates it, statements prepared and finalized, text and blobs
/// bound, errors as text.
///
/// `synchronous=NORMAL`: in WAL mode a commit is in the log before the call
/// returns, so a killed process loses nothing; a power cut may lose the
/// last commits, leaving an older state (each store says why that is safe).
///
/// Not thread-safe: one owner (a serial queue, an actor) at a time.
package final class SQLiteConnection {
    package let url: URL
    private var handle: OpaquePointer?

    /// Opens the file at `url` (see `preparePrivateFile`), in WAL mode.
    /// Throws SQLite's reason when it cannot be opened or read.
    package init(at url: URL, busyTimeoutMilliseconds: Int32) throws(SQLiteError) {
        self.url = url
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        guard sqlite3_open_v2(url.path, &handle, flags, nil) == SQLITE_OK else {
            let reason = lastError
            close()
            throw SQLiteError(reason)
        }
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        do {
            try execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    private func close() {
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Makes `url` ready for a connection: a regular file of this user,
    /// private (made 0600 when it is open to others), or a new one created
    /// 0600 (SQLite would create it with the umask's mode, and its -wal
    /// and -shm files take the main file's). Returns what is wrong, if
    /// anything.
    package static func preparePrivateFile(_ url: URL) -> String? {
        var info = stat()
        if lstat(url.path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == getuid() else {
                return "\(url.path) is not a regular file of this user"
            }
            if info.st_mode & 0o077 != 0, chmod(url.path, 0o600) != 0 {
                return "\(url.path) is open to other users and cannot be made private"
            }
            return nil
        }
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return "cannot create \(url.path): \(String(cString: strerror(errno)))" }
        Glibc.close(fd)
        return nil
    }

    /// SQLite's message for the last failure.
    package var lastError: String {
        handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
    }

    /// The last failure's extended result code (constraints and the like).
    package var lastExtendedErrorCode: Int32 { sqlite3_extended_errcode(handle) }

    /// The row ID the last INSERT made.
    package var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs statements that return nothing to read.
    package func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &message) == SQLITE_OK else {
            defer { sqlite3_free(message) }
            throw SQLiteError(message.map { String(cString: $0) } ?? lastError)
        }
    }

    /// `body` inside one transaction: all of it is recorded, or none.
    package func transaction<E: Error>(
        _ makeError: (String) -> E, _ body: () throws(E) -> Void
    ) throws(E) {
        do { try execute("BEGIN IMMEDIATE") } catch { throw makeError(error.reason) }
        do throws(E) {
            try body()
            do { try execute("COMMIT") } catch { throw makeError(error.reason) }
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` with `sql` prepared, finalized after; a statement that
    /// does not prepare throws `makeError(reason)`.
    package func statement<T, E: Error>(
        _ sql: String, _ makeError: (String) -> E, _ body: (OpaquePointer) throws(E) -> T
    ) throws(E) -> T {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw makeError(lastError)
        }
        defer { sqlite3_finalize(statement) }
        return try body(statement)
    }

    /// Steps `statement` once: true for a row, false when done; nil on a
    /// failure (`lastError` says which).
    package func step(_ statement: OpaquePointer) -> Bool? {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: return nil
        }
    }

    // MARK: - Binding and reading

    package static func bind(_ text: String?, _ index: Int32, _ statement: OpaquePointer) {
        guard let text else {
            sqlite3_bind_null(statement, index)
            return
        }
        sqlite3_bind_text(statement, index, text, -1, csqlite_transient())
    }

    package static func bind(_ data: Data, _ index: Int32, _ statement: OpaquePointer) {
        data.withUnsafeBytes { bytes in
            // A non-nil pointer even for empty data: nil would bind NULL.
            var zero: UInt8 = 0
            let pointer = bytes.baseAddress ?? withUnsafePointer(to: &zero) { UnsafeRawPointer($0) }
            _ = sqlite3_bind_blob64(statement, index, pointer, sqlite3_uint64(bytes.count), csqlite_transient())
        }
    }

    package static func bind(_ value: Int64?, _ index: Int32, _ statement: OpaquePointer) {
        guard let value else {
            sqlite3_bind_null(statement, index)
            return
        }
        sqlite3_bind_int64(statement, index, value)
    }

    package static func bind(_ value: Double, _ index: Int32, _ statement: OpaquePointer) {
        sqlite3_bind_double(statement, index, value)
    }

    package static func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
        sqlite3_column_text(statement, column).map { String(cString: $0) }
    }

    package static func blob(_ statement: OpaquePointer, _ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    package static func integer(_ statement: OpaquePointer, _ column: Int32) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, column)
    }

    package static func double(_ statement: OpaquePointer, _ column: Int32) -> Double {
        sqlite3_column_double(statement, column)
    }
}

/// SQLite's reason for a failure.
package struct SQLiteError: Error {
    package let reason: String
    package init(_ reason: String) { self.reason = reason }
}
