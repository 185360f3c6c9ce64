import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A download's bytes as they arrive: a private file written at an offset,
/// flushed before the journal records how much it holds. Bytes are
/// gathered in memory and written a mebibyte at a time: libcurl hands them
/// over 16 KiB at a time, and a write(2) each was a third of the agent's
/// system time on a 1 GiB download.
final class PartialFile {
    let url: URL
    private let fd: Int32
    /// Bytes of the body so far (the file's, then the gathered ones).
    var length: Int64 { written + Int64(gathered.count) }
    /// Bytes known to be on disk: `length` at the last `flush()`.
    private(set) var flushed: Int64
    /// Bytes in the file.
    private var written: Int64
    /// Bytes not written yet.
    private var gathered = Data()
    private static let writeSize = 1 << 20

    /// Opens (creating it 0600) `url`, keeping its first `keeping` bytes
    /// when it holds at least that many, else none.
    init(_ url: URL, keeping: Int64) throws(DownloadError) {
        self.url = url
        fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw DownloadError.file("cannot open \(url.path): \(String(cString: strerror(errno)))") }
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int64(info.st_size) : 0
        written = keeping > 0 && size >= keeping ? keeping : 0
        flushed = written
        try truncate(to: written)
    }

    deinit { close(fd) }

    /// Drops everything from `offset` on, and writes from there next.
    func truncate(to offset: Int64) throws(DownloadError) {
        if offset > written { try writeGathered() }
        gathered.removeAll(keepingCapacity: true)
        guard ftruncate(fd, off_t(offset)) == 0, lseek(fd, off_t(offset), SEEK_SET) == off_t(offset) else {
            throw DownloadError.file("cannot truncate \(url.path): \(String(cString: strerror(errno)))")
        }
        written = offset
        flushed = min(flushed, offset)
    }

    func append(_ data: Data) throws(DownloadError) {
        gathered.append(data)
        if gathered.count >= Self.writeSize { try writeGathered() }
    }

    private func writeGathered() throws(DownloadError) {
        guard !gathered.isEmpty else { return }
        var failure: String?
        gathered.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    // ENOSPC names a full disk: the transfer fails saying so,
                    // keeping what was flushed for a later resume.
                    failure = "cannot write \(url.path): \(String(cString: strerror(errno)))"
                    return
                }
                offset += written
            }
        }
        if let failure { throw DownloadError.file(failure) }
        written += Int64(gathered.count)
        gathered.removeAll(keepingCapacity: true)
    }

    /// Makes `length` bytes durable (fdatasync: the data and the size, not
    /// the times).
    func flush() throws(DownloadError) {
        try writeGathered()
        guard fdatasync(fd) == 0 else {
            throw DownloadError.file("cannot flush \(url.path): \(String(cString: strerror(errno)))")
        }
        flushed = written
    }
}

/// Why one attempt of a download stopped.
enum DownloadError: Error {
    /// The network failed; another attempt may succeed.
    case network(URLError)
    /// Anything else: the transfer fails with this reason.
    case file(String)
}
