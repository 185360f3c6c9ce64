internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A TCP connection (optionally TLS from its start) read and written as
/// bytes: a raw connection (see `RawConnection`) whose client reads of a
/// minimum and maximum length, with timeouts, and closes each side.
/// Reads never buffer without bound: past `ByteStreamClient.bufferLimit`
/// bytes nobody has read, the socket is not read until they are.
typealias StreamConnection = RawConnection<ByteStreamClient>

/// What a byte stream adds to a raw connection.
struct ByteStreamClient: RawConnectionClient {
    let host: String
    let port: Int
    static let bufferLimit = 1 << 20

    struct Reader: Sendable {
        let serial: Int
        let minLength: Int
        let maxLength: Int
        let continuation: CheckedContinuation<(Data, Bool), any Error>
    }

    typealias State = ByteStreamState

    typealias Event = StreamLifecycleEvent
    /// The error it ends with; nil when the peer closed cleanly.
    typealias Ending = URLError?

    struct Effects: Sendable {
        var served: [(Reader, (Data, Bool))] = []
        var report: (@Sendable () -> Void)?
        var end: RawConnectionEnd<ByteStreamClient>?
    }

    /// A read or write taken out at its timeout.
    enum Expired {
        case reader(CheckedContinuation<(Data, Bool), any Error>)
        case writer(CheckedContinuation<Void, any Error>)
    }

    struct EndEffects: Sendable {
        let readers: [Reader]
        let error: URLError
    }

    var url: String { "\(host):\(port)" }
    /// The host as a URL's authority has it (IPv6 in brackets).
    private var hostPart: String { host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host }
    var closedError: URLError { URLError.make(.networkConnectionLost, url: url, reason: "The stream is closed.") }
    var challengeURL: URL? { URL(string: "https://\(hostPart):\(port)") }
    var badTargetError: URLError {
        URLError.make(.badURL, url: url, reason: "'\(host)' and port \(port) do not make a host to connect to.")
    }
    static var errorReplacesCleanEnd: Bool { true }
    static func failed(_ error: URLError) -> URLError? { error }
    static func error(of ending: URLError?) -> URLError? { ending }

    func connectRequest(_ state: inout State) -> URLRequest? {
        URL(string: "\(state.secure ? "https" : "http")://\(hostPart):\(port)").map { URLRequest(url: $0) }
    }

    func openingBytes(context: SessionContext) -> Result<Data, URLError>? { nil }

    func received(
        _ bytes: UnsafeRawBufferPointer, _ guarded: inout RawConnectionGuarded<Self>, id: TransferID
    ) -> (RawConnectionReceiveVerdict, Effects) {
        guard let served = guarded.state.received(bytes) else { return (.keepReading, Effects()) }
        return (.buffered(guarded.state.buffer.count), Effects(served: served))
    }

    func streamEnded(_ error: URLError?, _ guarded: inout RawConnectionGuarded<Self>) -> Effects {
        guard error == nil else { return Effects(end: guarded.end(error, client: self)) }
        // The peer closed: what is buffered can still be read, then EOF;
        // writes can no longer go out.
        var effects = Effects(served: guarded.state.peerClosed(), report: Self.report(.readClosed, &guarded))
        effects.end = guarded.end(nil, client: self)
        return effects
    }

    /// Waiting writes (and reads, unless the end was clean) fail; after a
    /// clean end, reads still get what is buffered.
    func ending(_ how: URLError?, wasOpen: Bool, _ guarded: inout RawConnectionGuarded<Self>) -> (EndEffects, Event) {
        let readers = how != nil ? guarded.state.takeReadersOnFailure() : []
        let failure = how ?? guarded.failure
        return (EndEffects(readers: readers, error: failure ?? closedError), .ended(failure))
    }

    func perform(_ effects: Effects, on connection: StreamConnection, id: TransferID) {
        for (reader, result) in effects.served { reader.continuation.resume(returning: result) }
        effects.report?()
        effects.end?.run(on: connection)
    }

    func finish(_ effects: EndEffects) {
        for reader in effects.readers { reader.continuation.resume(throwing: effects.error) }
    }

    func closeForInvalidation(_ connection: StreamConnection) { connection.cancel() }

    /// The observer, if `event` was not reported yet (under the lock; the
    /// end is reported by the core).
    static func report(_ event: StreamLifecycleEvent, _ guarded: inout RawConnectionGuarded<Self>) -> (@Sendable () -> Void)? {
        guard let observer = guarded.observer, guarded.state.shouldReport(event) else { return nil }
        return { observer(event) }
    }

}

extension RawConnection where Client == ByteStreamClient {
    convenience init(identifier: Int, context: SessionContext, host: String, port: Int) {
        self.init(
            identifier: identifier, context: context, client: ByteStreamClient(host: host, port: port), state: .init(),
            highWatermark: ByteStreamClient.bufferLimit)
    }

    var host: String { client.host }
    var port: Int { client.port }

    /// TLS from the connection's start; after it is open, an error.
    func startSecureConnection() {
        let tooLate = guarded.withLock { guarded -> Bool in
            guard guarded.machine.phase == .idle else { return true }
            guarded.state.useTLS()
            return false
        }
        if tooLate {
            end(URLError.make(
                .secureConnectionFailed, url: client.url,
                reason: "startSecureConnection() was called after the connection was opened; call it before the "
                    + "first read or write (TLS over an open connection is not supported)."))
        } else {
            start()
        }
    }

    /// Opens the connection unless it is already open or opening.
    private func open() async throws {
        start()
        try await waitUntilOpen()
    }

    // MARK: - Reading and writing

    func read(minLength: Int, maxLength: Int, timeout: TimeInterval) async throws -> (Data, Bool) {
        // After the peer's clean end, what was buffered is still read.
        let endedCleanly = guarded.withLock { $0.machine.isClosed && $0.failure == nil && $0.state.atEOF }
        if !endedCleanly { try await open() }
        let minimum = max(0, minLength)
        let maximum = max(1, max(minimum, maxLength))
        return try await withCheckedThrowingContinuation { continuation in
            var resume: TransferID?
            let (immediate, serial) = guarded.withLock { guarded -> ((Data, Bool)?, Int) in
                let serial = guarded.makeSerial()
                let reader = ByteStreamClient.Reader(
                    serial: serial, minLength: minimum, maxLength: maximum, continuation: continuation)
                guard let taken = guarded.state.read(reader) else { return (nil, serial) }
                resume = guarded.machine.drained(buffered: guarded.state.buffer.count)
                return (taken, 0)
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
        try await open()
        guard !data.isEmpty else { return }
        if guarded.withLock({ $0.state.writeClosed }) {
            throw URLError.make(
                .cannotLoadFromNetwork, url: client.url, reason: "write() after closeWrite(): the stream no longer sends.")
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let serial = guarded.withLock { guarded -> Int? in
                guard !guarded.state.writeClosed, let (id, end) = guarded.machine.queue(data.count) else { return nil }
                let serial = guarded.makeSerial()
                guarded.writers.append(RawConnectionWriter(serial: serial, end: end, continuation: continuation))
                engine.sendOnStream(id, data)  // enqueues only: safe under the lock
                return serial
            }
            guard let serial else { return continuation.resume(throwing: failure ?? client.closedError) }
            if timeout > 0 { expire(serial: serial, after: timeout, isReader: false) }
        }
    }

    /// Ends a read or write still waiting after `timeout` with `.timedOut`.
    private func expire(serial: Int, after timeout: TimeInterval, isReader: Bool) {
        let url = client.url
        Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
            guard let self else { return }
            let error = URLError.make(.timedOut, url: url, reason: "No bytes \(isReader ? "arrived" : "went out") for \(timeout) s.")
            let expired = guarded.withLock { guarded -> ByteStreamClient.Expired? in
                if isReader, let reader = guarded.state.expireReader(serial: serial) {
                    return .reader(reader.continuation)
                }
                if !isReader, let index = guarded.writers.firstIndex(where: { $0.serial == serial }) {
                    return .writer(guarded.writers.remove(at: index).continuation)
                }
                return nil
            }
            switch expired {
            case .reader(let continuation): continuation.resume(throwing: error)
            case .writer(let continuation): continuation.resume(throwing: error)
            case nil: break
            }
        }
    }

    func closeWrite() {
        let (id, report) = guarded.withLock { guarded -> (TransferID?, (@Sendable () -> Void)?) in
            guarded.state.closeWrite()
            return (guarded.machine.transferID, ByteStreamClient.report(.writeClosed, &guarded))
        }
        // Told before the FIN goes: the peer may close at once, and the
        // engine thread would then tell the end before this thread told
        // the write side's close.
        report?()
        if let id { engine.closeStreamForWriting(id) }
    }

    func closeRead() {
        typealias Reader = ByteStreamClient.Reader
        let (readers, resume, report) = guarded.withLock { guarded -> ([Reader], TransferID?, (@Sendable () -> Void)?) in
            let report = ByteStreamClient.report(.readClosed, &guarded)
            let readers = guarded.state.closeRead()
            return (readers, guarded.machine.resumeReading(), report)
        }
        if let resume { engine.resumeReadingStream(resume) }
        for reader in readers { reader.continuation.resume(returning: (Data(), true)) }
        report?()
    }

    func cancel() {
        // Ended before the engine is told: once told, it may close the
        // stream and report a clean end from its thread first.
        let id = guarded.withLock { $0.machine.transferID }
        end(URLError.make(.cancelled, url: client.url, reason: "cancelled"))
        cancelTransfer(id)
    }
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
