internal import CurlEngine
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The file a download writes. Writes run on a serial queue of the file's
/// own, never on the engine thread: when the kernel throttles dirty pages a
/// write can block for seconds, and the engine thread must keep serving
/// every other transfer (and their timers) meanwhile.
///
/// Backpressure: the engine hands chunks over with `enqueue`; once more than
/// `highWatermark` bytes wait to be written the transfer pauses, and
/// `whenDrained` resumes it below `lowWatermark`.
///
/// `@unchecked Sendable`: the fd and size are touched only on `queue` (or
/// before the first enqueue, when nothing else knows the file); the pending
/// counters are behind a Mutex.
final class DownloadFile: @unchecked Sendable {
    let url: URL
    let name: String
    private var fd: Int32
    /// Bytes in the file; read it after `flush`.
    private(set) var size: Int64
    private let queue = DispatchQueue(label: "AsyncURLSession.DownloadFile")
    private let pending = Mutex(Pending())
    static let highWatermark = 4 << 20
    static let lowWatermark = 1 << 20

    private struct Pending {
        var bytes = 0
        var error: URLError?
        var onDrain: (@Sendable () -> Void)?
    }

    init(fd: Int32, url: URL, name: String, size: Int64) {
        self.fd = fd
        self.url = url
        self.name = name
        self.size = size
    }

    deinit {
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    /// Whether the writer is far enough behind that receiving should pause.
    var isFull: Bool { pending.withLock { $0.bytes >= Self.highWatermark } }

    /// Queues bytes for writing. Returns the first write error so far, if any.
    func enqueue(_ data: Data) -> URLError? {
        let failed = pending.withLock { pending -> URLError? in
            if let error = pending.error { return error }
            pending.bytes += data.count
            return nil
        }
        if let failed { return failed }
        queue.async { [self] in
            let error = writeNow(data)
            let drained = pending.withLock { pending -> (@Sendable () -> Void)? in
                pending.bytes -= data.count
                if let error, pending.error == nil { pending.error = error }
                guard pending.bytes <= Self.lowWatermark || pending.error != nil, let drain = pending.onDrain else {
                    return nil
                }
                pending.onDrain = nil
                return drain
            }
            drained?()
        }
        return nil
    }

    /// Runs `body` once the writer is below the low watermark (now, if it is).
    func whenDrained(_ body: @escaping @Sendable () -> Void) {
        let now = pending.withLock { pending -> Bool in
            if pending.bytes <= Self.lowWatermark || pending.error != nil { return true }
            pending.onDrain = body
            return false
        }
        if now { body() }
    }

    /// Runs `completion` after every queued write, with the first write error.
    func flush(_ completion: @escaping @Sendable (URLError?) -> Void) {
        queue.async { [self] in
            completion(pending.withLock { $0.error })
        }
    }

    /// Waits for every queued write (never call it on the engine thread).
    func drain() -> URLError? {
        queue.sync { pending.withLock { $0.error } }
    }

    /// Writes synchronously: only before the first `enqueue` (resume setup).
    func truncateNow(to length: Int64) -> URLError? {
        guard ftruncate(fd, off_t(length)) == 0 else {
            return URLError.make(
                .cannotWriteToFile, url: nil,
                reason: "Cannot truncate the download file \(url.path): \(String(cString: strerror(errno))).")
        }
        size = length
        return nil
    }

    /// Truncates in order with the queued writes.
    func truncate(to length: Int64) {
        queue.async { [self] in
            if let error = truncateNow(to: length) {
                pending.withLock { if $0.error == nil { $0.error = error } }
            }
        }
    }

    func close() {
        queue.async { [self] in closeNow() }
    }

    /// Becomes the file at `source`, written elsewhere (`length` bytes):
    /// moved over this one, or copied when it is on another file system,
    /// in order with the queued writes (nothing is written after it).
    func adopt(_ source: URL, size length: Int64) {
        queue.async { [self] in
            closeNow()
            var failure: URLError?
            if rename(source.path, url.path) != 0 {
                let reason = String(cString: strerror(errno))
                do {
                    // Another file system (the agent's folder is often a tmpfs).
                    unlink(url.path)
                    try FileManager.default.copyItem(at: source, to: url)
                    unlink(source.path)
                } catch {
                    failure = URLError.make(
                        .cannotWriteToFile, url: nil,
                        reason: "Cannot move the finished download \(source.path) to \(url.path): \(reason); \(error)")
                }
            }
            size = length
            if let failure { pending.withLock { if $0.error == nil { $0.error = failure } } }
        }
    }

    func remove() {
        queue.async { [self] in
            closeNow()
            unlink(url.path)
        }
    }

    private func closeNow() {
        if fd >= 0 {
            _ = Glibc.close(fd)
            fd = -1
        }
    }

    private func writeNow(_ data: Data) -> URLError? {
        guard fd >= 0 else { return nil }
        return data.withUnsafeBytes { bytes -> URLError? in
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
    }
}
