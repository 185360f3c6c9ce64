import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where default sessions keep what outlives a process (cookies now; the
/// cache and credentials next): `$XDG_DATA_HOME/AsyncURLSession`, else
/// `~/.local/share/AsyncURLSession`, as the XDG base directory rules say.
/// Folders are created 0700 and must be real directories owned by us.
enum StorageLocation {
    /// nil when neither XDG_DATA_HOME (absolute) nor HOME is set: then
    /// nothing is written to disk.
    static var defaultFolder: URL? {
        userFolder("XDG_DATA_HOME", else: ".local/share")?.appendingPathComponent("AsyncURLSession")
    }

    /// An XDG base directory: `$variable` when it is absolute, else
    /// `$HOME/fallback`; nil when neither is usable.
    static func userFolder(_ variable: String, else fallback: String) -> URL? {
        let environment = ProcessInfo.processInfo.environment
        if let folder = environment[variable], folder.hasPrefix("/") { return URL(fileURLWithPath: folder) }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return URL(fileURLWithPath: home).appendingPathComponent(fallback)
    }

    /// Creates `folder` (and its parents, 0700) if needed, and checks it is
    /// a directory of ours that nobody else can write. Returns why not.
    static func prepare(_ folder: URL) -> String? {
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            return "cannot create \(folder.path): \(error.localizedDescription)"
        }
        var info = stat()
        guard lstat(folder.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            return "\(folder.path) is not a directory"
        }
        guard info.st_uid == getuid() else { return "\(folder.path) belongs to another user" }
        if info.st_mode & 0o077 != 0, chmod(folder.path, 0o700) != 0 {
            return "\(folder.path) is open to other users and cannot be made private"
        }
        return nil
    }

    /// Writes `data` to `url` so that a crash never leaves a torn file: a
    /// new 0600 file beside it, flushed to disk, then renamed over it.
    static func writeAtomically(_ data: Data, to url: URL) -> String? {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return "cannot create \(temporary.path): \(String(cString: strerror(errno)))" }
        var failure: String?
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count, failure == nil {
                let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = "cannot write \(temporary.path): \(String(cString: strerror(errno)))"
                } else {
                    offset += written
                }
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = "cannot flush \(temporary.path): \(String(cString: strerror(errno)))" }
        close(fd)
        if failure == nil, rename(temporary.path, url.path) != 0 {
            failure = "cannot replace \(url.path): \(String(cString: strerror(errno)))"
        }
        if failure != nil { unlink(temporary.path) }
        return failure
    }

    /// The contents of a file of ours: a regular file (not a link), owned by
    /// us, private, at most `limit` bytes. nil and why when it is not.
    static func readPrivateFile(_ url: URL, limit: Int) -> Result<Data?, StorageFileError> {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return .success(nil) }
            return .failure(StorageFileError("cannot open \(url.path): \(String(cString: strerror(errno)))"))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == getuid() else {
            return .failure(StorageFileError("\(url.path) is not a regular file of ours"))
        }
        guard info.st_mode & 0o077 == 0 else {
            return .failure(StorageFileError("\(url.path) can be read or written by other users (mode \(String(info.st_mode & 0o777, radix: 8)))"))
        }
        guard info.st_size <= limit else {
            return .failure(StorageFileError("\(url.path) is larger than \(limit) bytes"))
        }
        var data = Data(count: Int(info.st_size))
        let count = data.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        guard count == Int(info.st_size) else { return .failure(StorageFileError("cannot read \(url.path)")) }
        return .success(data)
    }
}

/// Why a storage file was refused.
struct StorageFileError: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
