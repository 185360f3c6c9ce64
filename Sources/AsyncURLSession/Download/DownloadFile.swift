internal import CurlEngine
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The file a download writes, written at its end with plain `write(2)`
/// from the engine thread (page-cache writes are short; a full disk is an
/// error the task reports, with resume data when it can).
///
/// `@unchecked Sendable` because it is created by the task, moved into the
/// task's lock-protected state, and from then on used only under that lock
/// (its fd and size are never touched concurrently).
final class DownloadFile: @unchecked Sendable {
    let url: URL
    let name: String
    private var fd: Int32
    private(set) var size: Int64

    init(fd: Int32, url: URL, name: String, size: Int64) {
        self.fd = fd
        self.url = url
        self.name = name
        self.size = size
    }

    deinit { close() }

    func write(_ bytes: UnsafeRawBufferPointer) -> URLError? {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.pwrite(fd, bytes.baseAddress! + offset, bytes.count - offset, off_t(size))
            if written < 0 {
                if errno == EINTR { continue }
                let reason = errno == ENOSPC
                    ? "The disk is full: the download stopped at \(size) bytes; free space and resume it."
                    : "Writing the download file \(url.path) failed: \(String(cString: strerror(errno)))."
                return URLError.make(.cannotWriteToFile, url: nil, reason: reason)
            }
            offset += written
            size += Int64(written)
        }
        return nil
    }

    func write(_ data: Data) -> URLError? {
        data.withUnsafeBytes { write($0) }
    }

    func truncate(to length: Int64) -> URLError? {
        guard ftruncate(fd, off_t(length)) == 0 else {
            return URLError.make(
                .cannotWriteToFile, url: nil,
                reason: "Cannot truncate the download file \(url.path): \(String(cString: strerror(errno))).")
        }
        size = length
        return nil
    }

    func close() {
        if fd >= 0 {
            _ = Glibc.close(fd)
            fd = -1
        }
    }

    func remove() {
        close()
        unlink(url.path)
    }
}
