internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A TCP connection (optionally TLS from its start) read and written as
/// bytes: the engine's raw stream of a connect-only transfer (see
/// `RawStream`). Reads never buffer without bound: past `bufferLimit`
/// bytes nobody has read, the socket is not read until they are.
final class StreamConnection: TransferDelegate, RawStreamDelegate, SessionConnection, Sendable {
    let identifier: Int
    let context: SessionContext
    let host: String
    let port: Int
    static let bufferLimit = 1 << 20

    private struct Reader: Sendable {
        let serial: Int
        let minLength: Int
        let maxLength: Int
        let continuation: CheckedContinuation<(Data, Bool), any Error>
    }

    private struct Writer: Sendable {
        let serial: Int
        let end: Int64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private enum Phase: Sendable, Equatable { case idle, connecting, open, closed }

    private struct Guarded: Sendable {
        var phase = Phase.idle
        var secure = false
        var transferID: TransferID?
        var buffer = Data()
        var atEOF = false
        var readPaused = false
        var readClosed = false
        var writeClosed = false
        var readers: [Reader] = []
        var openWaiters: [CheckedContinuation<Void, any Error>] = []
        var queuedBytes: Int64 = 0
        var writers: [Writer] = []
        var failure: URLError?
        var nextSerial = 0
        var readClosedReported = false
        var writeClosedReported = false
        /// Hears the sides closing and the end (the classic adapter's delegate calls).
        var observer: (@Sendable (StreamLifecycleEvent) -> Void)?
    }

    private let guarded = Mutex(Guarded())
    /// The TLS challenges of a secure connection with a handler.
    let tlsChallenges = ConnectionTLSChallenges()

    init(identifier: Int, context: SessionContext, host: String, port: Int) {
        self.identifier = identifier
        self.context = context
        self.host = host
        self.port = port
    }

    private var engine: CurlEngine { CurlEngine.shared }
    private var url: String { "\(host):\(port)" }
    /// The host as a URL's authority has it (IPv6 in brackets).
    private var hostPart: String { host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host }

    /// `observer` hears each side closing and the end, once each.
    func observe(_ observer: @escaping @Sendable (StreamLifecycleEvent) -> Void) {
        guarded.withLock { $0.observer = observer }
    }

    /// Ended (cancelled, failed, or the peer closed).
    var hasEnded: Bool { guarded.withLock { $0.phase == .closed } }

    /// The observer, if `event` was not reported yet (under the lock).
    private static func report(_ event: StreamLifecycleEvent, _ guarded: inout Guarded) -> (@Sendable () -> Void)? {
        guard let observer = guarded.observer else { return nil }
        switch event {
        case .readClosed:
            guard !guarded.readClosedReported else { return nil }
            guarded.readClosedReported = true
        case .writeClosed:
            guard !guarded.writeClosedReported else { return nil }
            guarded.writeClosedReported = true
        case .ended:
            guarded.observer = nil
        }
        return { observer(event) }
    }

    // MARK: - Connecting

    /// TLS from the connection's start; after it is open, an error.
    func startSecureConnection() {
        let tooLate = guarded.withLock { guarded -> Bool in
            guard case .idle = guarded.phase else { return true }
            guarded.secure = true
            return false
        }
        if tooLate {
            fail(URLError.make(
                .secureConnectionFailed, url: url,
                reason: "startSecureConnection() was called after the connection was opened; call it before the "
                    + "first read or write (TLS over an open connection is not supported)."))
        } else {
            connect()
        }
    }

    /// Opens the connection unless it is already open or opening.
    func closeForInvalidation() { cancel() }

    /// Starts the connect-only transfer (again, after a TLS challenge was
    /// answered: `reconnecting`).
    private func connect(reconnecting: Bool = false) {
        guard guarded.withLock({ guarded in
            if reconnecting, guarded.phase == .connecting { guarded.phase = .idle }
            return guarded.phase == .idle
        }) else { return }
        guard context.registerConnection(self) else {
            return fail(URLError.make(
                .cancelled, url: url, reason: "The session was invalidated; create a new Session for new tasks."))
        }
        let start = guarded.withLock { guarded -> (TransferID, TransferRequest)?? in
            guard case .idle = guarded.phase else { return .some(nil) }
            guard let target = URL(string: "\(guarded.secure ? "https" : "http")://\(hostPart):\(port)"),
                case .success(let prepared) = RequestPreparation.transferRequest(
                    for: URLRequest(url: target), configuration: context.configuration, body: .none,
                    tlsChallenges: tlsChallenges.hop(for: target, remembered: context.tlsChallengeAnswers),
                    connectOnly: true)
            else { return nil }
            let id = engine.makeTransferID(for: prepared.url, in: context.placement)
            guarded.transferID = id
            guarded.phase = .connecting
            return .some((id, prepared))
        }
        switch start {
        case .some(.some(let (id, prepared))):
            engine.start(id, in: context.placement, request: prepared, collectsMetrics: false, delegate: self)
        case .some(.none):
            break
        case .none:
            fail(URLError.make(.badURL, url: url, reason: "'\(host)' and port \(port) do not make a host to connect to."))
        }
    }

    private func waitUntilOpen() async throws {
        connect()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let ready = guarded.withLock { guarded -> Result<Bool, URLError> in
                switch guarded.phase {
                case .open: return .success(true)
                case .closed: return .failure(guarded.failure ?? Self.closedError(url))
                default:
                    guarded.openWaiters.append(continuation)
                    return .success(false)
                }
            }
            switch ready {
            case .success(true): continuation.resume()
            case .success(false): break
            case .failure(let error): continuation.resume(throwing: error)
            }
        }
    }

    private static func closedError(_ url: String) -> URLError {
        URLError.make(.networkConnectionLost, url: url, reason: "The stream is closed.")
    }

    // MARK: - Reading and writing

    func read(minLength: Int, maxLength: Int, timeout: TimeInterval) async throws -> (Data, Bool) {
        // After the peer's clean end, what was buffered is still read.
        let endedCleanly = guarded.withLock { $0.phase == .closed && $0.failure == nil && $0.atEOF }
        if !endedCleanly { try await waitUntilOpen() }
        let minimum = max(0, minLength)
        let maximum = max(1, max(minimum, maxLength))
        return try await withCheckedThrowingContinuation { continuation in
            var resume: TransferID?
            let (immediate, serial) = guarded.withLock { guarded -> ((Data, Bool)?, Int) in
                guarded.nextSerial += 1
                if guarded.readers.isEmpty, let taken = Self.take(&guarded, minimum, maximum) {
                    resume = Self.resumeIfDrained(&guarded)
                    return (taken, 0)
                }
                guarded.readers.append(Reader(
                    serial: guarded.nextSerial, minLength: minimum, maxLength: maximum, continuation: continuation))
                return (nil, guarded.nextSerial)
            }
            if let resume { engine.resumeReadingStream(resume) }
            if let immediate {
                continuation.resume(returning: immediate)
            } else if timeout > 0 {
                expire(serial: serial, after: timeout, isReader: true)
            }
        }
    }

    func write(_ data: Data, timeout: TimeInterval) async throws {
        try await waitUntilOpen()
        guard !data.isEmpty else { return }
        if guarded.withLock({ $0.writeClosed }) {
            throw URLError.make(.cannotLoadFromNetwork, url: url, reason: "write() after closeWrite(): the stream no longer sends.")
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let serial = guarded.withLock { guarded -> Int? in
                guard case .open = guarded.phase, !guarded.writeClosed, let id = guarded.transferID else { return nil }
                guarded.nextSerial += 1
                guarded.queuedBytes += Int64(data.count)
                guarded.writers.append(Writer(serial: guarded.nextSerial, end: guarded.queuedBytes, continuation: continuation))
                engine.sendOnStream(id, data)  // enqueues only: safe under the lock
                return guarded.nextSerial
            }
            guard let serial else {
                return continuation.resume(throwing: guarded.withLock { $0.failure } ?? Self.closedError(url))
            }
            if timeout > 0 { expire(serial: serial, after: timeout, isReader: false) }
        }
    }

    /// Ends a read or write still waiting after `timeout` with `.timedOut`.
    private func expire(serial: Int, after timeout: TimeInterval, isReader: Bool) {
        let url = url
        Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
            guard let self else { return }
            let error = URLError.make(.timedOut, url: url, reason: "No bytes \(isReader ? "arrived" : "went out") for \(timeout) s.")
            let waiter = guarded.withLock { guarded -> (any ResumableWithError)? in
                if isReader, let index = guarded.readers.firstIndex(where: { $0.serial == serial }) {
                    return ReaderBox(guarded.readers.remove(at: index).continuation)
                }
                if !isReader, let index = guarded.writers.firstIndex(where: { $0.serial == serial }) {
                    return WriterBox(guarded.writers.remove(at: index).continuation)
                }
                return nil
            }
            waiter?.resume(throwing: error)
        }
    }

    func closeWrite() {
        let (id, report) = guarded.withLock { guarded -> (TransferID?, (@Sendable () -> Void)?) in
            guarded.writeClosed = true
            return (guarded.transferID, Self.report(.writeClosed, &guarded))
        }
        if let id { engine.closeStreamForWriting(id) }
        report?()
    }

    func closeRead() {
        let (readers, resume, report) = guarded.withLock { guarded -> ([Reader], TransferID?, (@Sendable () -> Void)?) in
            let report = Self.report(.readClosed, &guarded)
            guarded.readClosed = true
            guarded.buffer = Data()
            let readers = guarded.readers
            guarded.readers = []
            let resume = guarded.readPaused ? guarded.transferID : nil
            guarded.readPaused = false
            return (readers, resume, report)
        }
        if let resume { engine.resumeReadingStream(resume) }
        for reader in readers { reader.continuation.resume(returning: (Data(), true)) }
        report?()
    }

    func cancel() {
        let id = guarded.withLock { $0.transferID }
        if let id {
            engine.cancel(id, in: context.engineID, error: URLError(.cancelled))
            engine.closeStream(id)
        }
        fail(URLError.make(.cancelled, url: url, reason: "cancelled"))
    }

    // MARK: - Engine callbacks (engine thread)

    func transferDidReceiveHead(_ head: consuming ResponseHead, of id: TransferID) {}
    func transferDidReceiveBody(_ bytes: UnsafeRawBufferPointer, of id: TransferID) -> BodyVerdict { .accepted }
    func transferDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64, of id: TransferID) {}

    func transferDidComplete(_ outcome: TransferOutcome, of id: TransferID) {
        if let report = outcome.tlsChallenge, let target = URL(string: "https://\(hostPart):\(port)") {
            // The handshake stopped for a decision; nothing was sent.
            return tlsChallenges.offer(
                report, url: target, remembered: context.tlsChallengeAnswers,
                retry: { [self] in connect(reconnecting: true) }, fail: { [self] in fail($0) })
        }
        if let error = outcome.error { return fail(error) }
        let waiters = guarded.withLock { guarded -> [CheckedContinuation<Void, any Error>] in
            guarded.phase = .open
            defer { guarded.openWaiters = [] }
            return guarded.openWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func streamDidReceive(_ bytes: UnsafeRawBufferPointer, of id: TransferID) -> Bool {
        let (served, keepReading) = guarded.withLock { guarded -> ([(Reader, (Data, Bool))], Bool) in
            if guarded.readClosed { return ([], true) }
            guarded.buffer.append(contentsOf: bytes)
            let served = Self.serveReaders(&guarded)
            if guarded.buffer.count >= Self.bufferLimit {
                guarded.readPaused = true
                return (served, false)
            }
            return (served, true)
        }
        for (reader, result) in served { reader.continuation.resume(returning: result) }
        return keepReading
    }

    func streamDidWrite(totalBytes: Int64, of id: TransferID) {
        let done = guarded.withLock { guarded -> [Writer] in
            let ready = guarded.writers.filter { $0.end <= totalBytes }
            guarded.writers.removeAll { $0.end <= totalBytes }
            return ready
        }
        for writer in done { writer.continuation.resume() }
    }

    func streamDidEnd(_ error: URLError?, of id: TransferID) {
        if let error { return fail(error) }
        // The peer closed: what is buffered can still be read, then EOF.
        let (served, report) = guarded.withLock { guarded -> ([(Reader, (Data, Bool))], (@Sendable () -> Void)?) in
            guarded.atEOF = true
            return (Self.serveReaders(&guarded), Self.report(.readClosed, &guarded))
        }
        for (reader, result) in served { reader.continuation.resume(returning: result) }
        report?()
        // Writes can no longer go out.
        fail(nil)
    }

    // MARK: - Buffer

    /// Up to `maximum` bytes once `minimum` are there (or the end came).
    private static func take(_ guarded: inout Guarded, _ minimum: Int, _ maximum: Int) -> (Data, Bool)? {
        if guarded.buffer.count >= max(minimum, 1) || guarded.atEOF || guarded.readClosed {
            let count = min(maximum, guarded.buffer.count)
            let chunk = guarded.buffer.prefix(count)
            guarded.buffer.removeFirst(count)
            let atEOF = (guarded.atEOF || guarded.readClosed) && guarded.buffer.isEmpty
            return (Data(chunk), atEOF)
        }
        return nil
    }

    private static func serveReaders(_ guarded: inout Guarded) -> [(Reader, (Data, Bool))] {
        var served: [(Reader, (Data, Bool))] = []
        while let reader = guarded.readers.first, let result = take(&guarded, reader.minLength, reader.maxLength) {
            guarded.readers.removeFirst()
            served.append((reader, result))
        }
        return served
    }

    private static func resumeIfDrained(_ guarded: inout Guarded) -> TransferID? {
        guard guarded.readPaused, guarded.buffer.count < bufferLimit / 2 else { return nil }
        guarded.readPaused = false
        return guarded.transferID
    }

    // MARK: - Ending

    /// Ends the connection: waiting writes (and reads, unless the end was
    /// clean) fail; with nil, reads still get what is buffered.
    private func fail(_ error: URLError?) {
        let (readers, writers, openWaiters, failure, report) = guarded.withLock { guarded in
            let failure = error ?? guarded.failure
            if guarded.failure == nil { guarded.failure = error }
            let report = guarded.phase == .closed ? nil : Self.report(.ended(failure), &guarded)
            guarded.phase = .closed
            defer {
                if error != nil { guarded.readers = [] }
                guarded.writers = []
                guarded.openWaiters = []
            }
            return (error != nil ? guarded.readers : [], guarded.writers, guarded.openWaiters, failure, report)
        }
        let ending = failure ?? Self.closedError(url)
        for reader in readers { reader.continuation.resume(throwing: ending) }
        for writer in writers { writer.continuation.resume(throwing: ending) }
        for waiter in openWaiters { waiter.resume(throwing: ending) }
        report?()
        context.unregisterConnection(identifier)
    }
}

/// A waiter taken out for a timeout, whatever its result type.
private protocol ResumableWithError: Sendable {
    func resume(throwing error: URLError)
}

private struct ReaderBox: ResumableWithError {
    let continuation: CheckedContinuation<(Data, Bool), any Error>
    init(_ continuation: CheckedContinuation<(Data, Bool), any Error>) { self.continuation = continuation }
    func resume(throwing error: URLError) { continuation.resume(throwing: error) }
}

private struct WriterBox: ResumableWithError {
    let continuation: CheckedContinuation<Void, any Error>
    init(_ continuation: CheckedContinuation<Void, any Error>) { self.continuation = continuation }
    func resume(throwing error: URLError) { continuation.resume(throwing: error) }
}

/// What a stream connection tells its observer (the classic adapter's
/// delegate calls), after its lock is let go, once each.
public enum StreamLifecycleEvent: Sendable {
    /// No more bytes will be read: the peer closed, or `closeRead()`.
    case readClosed
    /// `closeWrite()`: no more bytes will be sent.
    case writeClosed
    /// The connection ended: nil when the peer closed it cleanly.
    case ended(URLError?)
}
