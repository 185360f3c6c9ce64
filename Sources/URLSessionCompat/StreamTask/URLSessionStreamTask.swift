import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A TCP connection read and written as bytes, as Apple's
/// `URLSessionStreamTask`, on the core's `StreamTask`. The connection
/// opens at the first read or write (or `startSecureConnection()`), so TLS
/// can still be asked for after `resume()`.
///
/// Delegate calls, on the delegate queue: `readClosedFor` when the peer
/// closes (or after `closeRead()`), `writeClosedFor` after `closeWrite()`,
/// `didCompleteWithError` when the connection ends (nil when the peer
/// closed it cleanly, `.cancelled` after `cancel()`). Completion handlers
/// run on the delegate queue.
///
/// Not offered: `captureStreams()` (no bound `InputStream`/`OutputStream`
/// pair is made from a connection here) and `stopSecureConnection()` (TLS
/// cannot be taken off a connection; it does nothing, as documented).
// @unchecked: adds only an immutable reference to a Sendable object.
open class URLSessionStreamTask: URLSessionTask, @unchecked Sendable {
    private let streamModel: StreamTaskModel
    private var stream: StreamTask { streamModel.connection }

    init(stream: StreamTask, identifier: Int, session: URLSession) {
        let model = StreamTaskModel(stream)
        streamModel = model
        super.init(model: model, identifier: identifier, session: session)
        stream.observeLifecycle { [weak self] event in self?.handle(event) }
    }

    open override func resume() {
        streamModel.markResumed()
        stream.challengeHandler = connectionChallengeHandler()
    }

    /// Does nothing: reads and writes are what move a stream.
    open override func suspend() {}

    /// Closes the connection; waiting reads and writes fail with `.cancelled`.
    open override func cancel() {
        guard state != .completed else { return }
        streamModel.markCancelRequested()
        stream.cancel()
    }

    /// TLS from the connection's start, verified as every other connection;
    /// call it before the first read or write (later, the task fails with an
    /// error that says so).
    open func startSecureConnection() { stream.startSecureConnection() }

    /// Does nothing: TLS cannot be taken off a connection here.
    open func stopSecureConnection() {}

    open func closeWrite() { stream.closeWrite() }
    open func closeRead() { stream.closeRead() }

    /// At least `minBytes` (fewer only at the end), at most `maxBytes`;
    /// `atEOF` once the peer closed and nothing is left. `timeout` 0 waits
    /// for ever.
    open func readData(
        ofMinLength minBytes: Int, maxLength maxBytes: Int, timeout: TimeInterval
    ) async throws -> (Data?, Bool) {
        let (data, atEOF) = try await stream.read(minLength: minBytes, maxLength: maxBytes, timeout: timeout)
        streamModel.noteRead(data.count)
        return (data, atEOF)
    }

    open func readData(
        ofMinLength minBytes: Int, maxLength maxBytes: Int, timeout: TimeInterval,
        completionHandler: @escaping @Sendable (Data?, Bool, (any Error)?) -> Void
    ) {
        answerOnDelegateQueue({ try await self.readData(ofMinLength: minBytes, maxLength: maxBytes, timeout: timeout) }) { result in
            switch result {
            case .success(let (data, atEOF)): completionHandler(data, atEOF, nil)
            case .failure(let error): completionHandler(nil, false, error)
            }
        }
    }

    /// Returns once the bytes were handed to the socket.
    open func write(_ data: Data, timeout: TimeInterval) async throws {
        try await stream.write(data, timeout: timeout)
        streamModel.noteWritten(data.count)
    }

    open func write(_ data: Data, timeout: TimeInterval, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        answerOnDelegateQueue({ try await self.write(data, timeout: timeout) }) { result in
            if case .failure(let error) = result { completionHandler(error) } else { completionHandler(nil) }
        }
    }

    // MARK: - Delegate calls

    private func handle(_ event: StreamLifecycleEvent) {
        guard let session else { return }
        let lane = laneMakingIt(with: session.makeDelegateLane)
        switch event {
        case .readClosed:
            lane.post { [self] in
                notify(URLSessionStreamDelegate.self, session: session) { $0.urlSession(session, readClosedFor: self) }
            }
        case .writeClosed:
            lane.post { [self] in
                notify(URLSessionStreamDelegate.self, session: session) { $0.urlSession(session, writeClosedFor: self) }
            }
        case .ended(let error):
            streamModel.markEnded(error)
            lane.post { [self] in
                notify(URLSessionTaskDelegate.self, session: session) {
                    $0.urlSession(session, task: self, didCompleteWithError: error)
                }
                session.taskDidCompleteWithoutWaiting(self)
            }
        }
    }
}
