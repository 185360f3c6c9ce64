internal import CurlEngine
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where download tasks write: one folder per user (0700), shared by the
/// sessions of a process and across processes so resume data stays usable.
/// Files in it are created 0600 with O_EXCL, never followed through links.
struct DownloadDirectory: Sendable {
    let url: URL

    static func defaultURL() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("AsyncURLSession-Downloads-\(getuid())")
    }

    /// Creates the folder if needed and checks that it is ours: a real
    /// directory (not a link someone planted in /tmp), owned by us, 0700.
    func prepare() -> URLError? {
        let path = url.path
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            return Self.error(.cannotCreateFile, "Cannot create the download folder \(path): \(String(cString: strerror(errno))).")
        }
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            return Self.error(.cannotCreateFile, "The download folder \(path) is not a directory.")
        }
        guard info.st_uid == getuid() else {
            return Self.error(.cannotCreateFile, "The download folder \(path) belongs to another user; refusing to use it.")
        }
        if info.st_mode & 0o077 != 0 { _ = chmod(path, 0o700) }
        return nil
    }

    /// A new, empty file for a download, open for writing.
    func createFile() -> Result<DownloadFile, URLError> {
        if let error = prepare() { return .failure(error) }
        StaleDownloadSweep.sweepIfDue(url)
        let name = "download-\(UUID().uuidString).tmp"
        let path = url.appendingPathComponent(name).path
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            return .failure(Self.error(.cannotCreateFile, "Cannot create the download file \(path): \(String(cString: strerror(errno)))."))
        }
        return .success(DownloadFile(fd: fd, url: URL(fileURLWithPath: path), name: name, size: 0))
    }

    /// Reopens a partial download named by resume data. Refuses anything but
    /// a plain name of a regular file inside this folder, so resume data can
    /// never be used to read or truncate an arbitrary file.
    func reopen(name: String, expectedSize: Int64) -> Result<DownloadFile, URLError> {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
            return .failure(Self.error(.cannotDecodeRawData, "The resume data names a file outside the download folder."))
        }
        if let error = prepare() { return .failure(error) }
        let path = url.appendingPathComponent(name).path
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            return .failure(Self.error(
                .cannotOpenFile, "The partial download \(path) no longer exists (\(String(cString: strerror(errno)))); download again."))
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == getuid() else {
            close(fd)
            return .failure(Self.error(.cannotOpenFile, "The partial download \(path) is not a regular file of ours."))
        }
        guard Int64(info.st_size) >= expectedSize else {
            close(fd)
            return .failure(Self.error(
                .cannotOpenFile, "The partial download \(path) is shorter than the resume data says; download again."))
        }
        let file = DownloadFile(fd: fd, url: URL(fileURLWithPath: path), name: name, size: Int64(info.st_size))
        if let error = file.truncateNow(to: expectedSize) {
            file.close()
            return .failure(error)
        }
        // Only now: the truncation made the file fresh (ftruncate sets its
        // mtime), and `StaleDownloadSweep` goes by the last write.
        StaleDownloadSweep.sweepIfDue(url)
        return .success(file)
    }

    static func error(_ code: URLError.Code, _ reason: String) -> URLError {
        URLError.make(code, url: nil, reason: reason)
    }
}
