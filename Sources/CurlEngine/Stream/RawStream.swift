internal import CCurl
import Foundation

/// A connection handed over by a connect-only transfer, read and written
/// with `curl_easy_recv` / `curl_easy_send` when epoll says its socket is
/// ready, never in a blocking loop. Engine thread only.
///
/// Why the easy handle stays in its multi: `curl_easy_recv` finds the
/// connection through the multi's connection cache, and removing the handle
/// is what closes it (tested on 7.88.1: the socket is closed by
/// `curl_multi_remove_handle`).
final class RawStream {
    let id: TransferID
    let easy: EasyHandle
    let socket: Int32
    let delegate: any RawStreamDelegate
    let url: String

    /// Bytes queued for sending; `sendOffset` of the first one went out.
    @exclusivity(unchecked) private var pending: [Data] = []
    @exclusivity(unchecked) private var sendOffset = 0
    @exclusivity(unchecked) private(set) var bytesWritten: Int64 = 0
    @exclusivity(unchecked) private(set) var readPaused = false
    @exclusivity(unchecked) private(set) var ended = false
    /// Half-close asked: shut the socket for writing once `pending` is sent.
    @exclusivity(unchecked) private var shutdownWhenSent = false
    @exclusivity(unchecked) private var writeShut = false

    /// One recv reads at most this much; TLS records are up to 16 KiB.
    private static let readSize = 64 * 1024
    @exclusivity(unchecked) private var readBuffer = [UInt8](repeating: 0, count: RawStream.readSize)

    init(id: TransferID, easy: EasyHandle, socket: Int32, delegate: any RawStreamDelegate, url: String) {
        self.id = id
        self.easy = easy
        self.socket = socket
        self.delegate = delegate
        self.url = url
    }

    /// The epoll events this stream needs now.
    var events: UInt32 {
        var events: UInt32 = 0
        if !readPaused { events |= EPOLLIN.rawValue }
        if !pending.isEmpty { events |= EPOLLOUT.rawValue }
        return events
    }

    /// Reads until libcurl has nothing more (`CURLE_AGAIN`), the delegate
    /// pauses, or the stream ends. TLS may hold decrypted bytes the socket
    /// no longer signals, so this also runs when reading resumes.
    /// Returns the error or end it met (`.some(nil)`: the peer closed).
    func readAvailable() -> URLError?? {
        while !readPaused {
            var received = 0
            let code = readBuffer.withUnsafeMutableBytes { buffer in
                curl_easy_recv(easy.raw, buffer.baseAddress, buffer.count, &received)
            }
            if code == CURLE_AGAIN { return nil }
            if code != CURLE_OK { return .some(failure(code, "receiving")) }
            if received == 0 { return .some(nil) }
            let keepReading = readBuffer.withUnsafeBytes { buffer in
                delegate.streamDidReceive(UnsafeRawBufferPointer(rebasing: buffer[0..<received]), of: id)
            }
            if !keepReading { readPaused = true }
        }
        return nil
    }

    func resumeReading() { readPaused = false }

    func enqueue(_ data: Data) {
        guard !data.isEmpty, !shutdownWhenSent else { return }
        pending.append(data)
    }

    func closeWriteWhenSent() { shutdownWhenSent = true }

    /// Sends what it can; returns an error when the connection failed.
    func writeAvailable() -> URLError? {
        var wroteAny = false
        while let first = pending.first {
            var sent = 0
            let code = first.withUnsafeBytes { bytes in
                curl_easy_send(easy.raw, bytes.baseAddress! + sendOffset, bytes.count - sendOffset, &sent)
            }
            if code == CURLE_AGAIN { break }
            if code != CURLE_OK { return failure(code, "sending") }
            sendOffset += sent
            bytesWritten += Int64(sent)
            wroteAny = wroteAny || sent > 0
            if sendOffset == first.count {
                pending.removeFirst()
                sendOffset = 0
            } else if sent == 0 {
                break
            }
        }
        if wroteAny { delegate.streamDidWrite(totalBytes: bytesWritten, of: id) }
        if shutdownWhenSent, pending.isEmpty, !writeShut {
            // A FIN for plain TCP. Over TLS the peer sees the TCP end too (no
            // close_notify: libcurl 7.88.1 offers no TLS half-close).
            writeShut = true
            _ = shutdown(socket, Int32(SHUT_WR))
        }
        return nil
    }

    /// Tells the delegate once.
    func end(_ error: URLError?) {
        guard !ended else { return }
        ended = true
        pending.removeAll()
        delegate.streamDidEnd(error, of: id)
    }

    private func failure(_ code: CURLcode, _ doing: String) -> URLError {
        let reason = String(cString: curl_easy_strerror(code))
        return URLError.make(
            code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR ? .networkConnectionLost : .cannotLoadFromNetwork,
            url: url, reason: "The connection failed while \(doing): \(reason) (libcurl error \(code.rawValue)).")
    }
}
