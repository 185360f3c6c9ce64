import Foundation

/// A byte stream's own state beside its raw connection's (`ByteStreamClient`):
/// the bytes nobody has read yet, the reads waiting for them, and which side
/// is closed. A value type whose fields change only by these transitions,
/// under the connection's lock; each returns what the connection resumes
/// after the lock (readers served, an observer to tell).
struct ByteStreamState: Sendable {
    /// TLS from the connection's start (`startSecureConnection()`).
    private(set) var secure = false
    /// Bytes received and not read yet.
    private(set) var buffer = Data()
    /// The peer closed cleanly: reads get what is buffered, then the end.
    private(set) var atEOF = false
    /// `closeRead()`: reads end at once, received bytes are dropped.
    private(set) var readClosed = false
    /// `closeWrite()`: writes are refused.
    private(set) var writeClosed = false
    /// Reads waiting for bytes, oldest first.
    private(set) var readers: [ByteStreamClient.Reader] = []
    private var readClosedReported = false
    private var writeClosedReported = false

    /// A read's result: the bytes and whether the stream is at its end.
    typealias Served = (ByteStreamClient.Reader, (Data, Bool))

    /// The stream uses TLS from its start.
    mutating func useTLS() {
        secure = true
    }

    /// Bytes arrived: buffered, and the waiting reads they complete served.
    /// Nil after `closeRead()` (the bytes are dropped).
    mutating func received(_ bytes: UnsafeRawBufferPointer) -> [Served]? {
        guard !readClosed else { return nil }
        buffer.append(contentsOf: bytes)
        return serveReaders()
    }

    /// The peer closed cleanly: what is buffered can still be read, then
    /// the end; the waiting reads that can complete now do.
    mutating func peerClosed() -> [Served] {
        atEOF = true
        return serveReaders()
    }

    /// The connection failed: every waiting read fails with it.
    mutating func takeReadersOnFailure() -> [ByteStreamClient.Reader] {
        defer { readers = [] }
        return readers
    }

    /// Whether `event` is told now (each side's close is told once).
    mutating func shouldReport(_ event: StreamLifecycleEvent) -> Bool {
        switch event {
        case .readClosed:
            defer { readClosedReported = true }
            return !readClosedReported
        case .writeClosed:
            defer { writeClosedReported = true }
            return !writeClosedReported
        case .ended:
            // The raw connection tells the end itself.
            return false
        }
    }

    /// A read of `minimum` to `maximum` bytes: served now from the buffer
    /// when no older read waits and enough is there, else `reader` waits.
    mutating func read(_ reader: ByteStreamClient.Reader) -> (Data, Bool)? {
        if readers.isEmpty, let taken = take(reader.minLength, reader.maxLength) { return taken }
        readers.append(reader)
        return nil
    }

    /// The waiting read `serial` timed out: taken out, to fail.
    mutating func expireReader(serial: Int) -> ByteStreamClient.Reader? {
        guard let index = readers.firstIndex(where: { $0.serial == serial }) else { return nil }
        return readers.remove(at: index)
    }

    /// `closeWrite()`.
    mutating func closeWrite() {
        writeClosed = true
    }

    /// `closeRead()`: the buffer is dropped; the waiting reads end (empty,
    /// at the end) and are returned to be resumed.
    mutating func closeRead() -> [ByteStreamClient.Reader] {
        readClosed = true
        buffer = Data()
        defer { readers = [] }
        return readers
    }

    // MARK: - Buffer

    /// Up to `maximum` bytes once `minimum` are there (or the end came).
    private mutating func take(_ minimum: Int, _ maximum: Int) -> (Data, Bool)? {
        guard buffer.count >= max(minimum, 1) || atEOF || readClosed else { return nil }
        let count = min(maximum, buffer.count)
        let chunk = buffer.prefix(count)
        buffer.removeFirst(count)
        let atEnd = (atEOF || readClosed) && buffer.isEmpty
        return (Data(chunk), atEnd)
    }

    private mutating func serveReaders() -> [Served] {
        var served: [Served] = []
        while let reader = readers.first, let result = take(reader.minLength, reader.maxLength) {
            readers.removeFirst()
            served.append((reader, result))
        }
        return served
    }
}
