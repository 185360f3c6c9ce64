import Foundation

/// A TCP connection read and written as bytes, as `URLSessionStreamTask`,
/// async first. libcurl connects (proxies, TLS verified as every other
/// connection); the bytes are yours.
///
/// ```swift
/// let stream = session.streamTask(withHostName: "example.com", port: 443)
/// stream.startSecureConnection()   // before the first read or write
/// stream.resume()
/// try await stream.write(Data("GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n".utf8), timeout: 10)
/// let (data, atEOF) = try await stream.read(minLength: 1, maxLength: 65536, timeout: 10)
/// ```
///
/// The connection opens at the first read or write (or at
/// `startSecureConnection()`), so TLS can still be asked for after
/// `resume()`, as Apple's code usually does. Up to 1 MiB received and not
/// read waits in a buffer; beyond it the socket is not read.
public final class StreamTask: Sendable {
    let connection: StreamConnection

    init(connection: StreamConnection) {
        self.connection = connection
    }

    public var taskIdentifier: Int { connection.identifier }
    public var host: String { connection.host }
    public var port: Int { connection.port }

    /// Nothing to start before the first read or write: kept for URLSession's
    /// shape.
    public func resume() {}

    /// TLS from the connection's start, verified with the session's settings.
    /// Only before the first read or write: later, the stream fails with an
    /// error that says so (TLS over an open connection is not supported).
    public func startSecureConnection() { connection.startSecureConnection() }

    /// At least `minLength` bytes (fewer only at the end), at most
    /// `maxLength`; `atEOF` once the peer closed and nothing is left.
    /// `timeout` 0 waits for ever.
    public func read(minLength: Int, maxLength: Int, timeout: TimeInterval) async throws -> (data: Data, atEOF: Bool) {
        let (data, atEOF) = try await connection.read(minLength: minLength, maxLength: maxLength, timeout: timeout)
        return (data, atEOF)
    }

    /// What the peer sends, as it arrives (up to 64 KiB a chunk), until it
    /// closes; throws when the connection fails. Pulled like `read`: while
    /// nobody iterates, at most 1 MiB waits and the socket is not read.
    public var bytes: AsyncThrowingStream<Data, any Error> {
        let connection = connection
        return AsyncThrowingStream {
            let (data, atEOF) = try await connection.read(minLength: 1, maxLength: 65536, timeout: 0)
            // The last chunk may come with the end; an empty one is the end.
            if data.isEmpty, atEOF { return nil }
            return data
        }
    }

    /// Returns once the bytes were handed to the socket.
    public func write(_ data: Data, timeout: TimeInterval) async throws {
        try await connection.write(data, timeout: timeout)
    }

    /// No more writes: the peer reads the end once what was written went out.
    public func closeWrite() { connection.closeWrite() }

    /// No more reads: buffered bytes are dropped, waiting reads end.
    public func closeRead() { connection.closeRead() }

    /// Closes the connection; waiting reads and writes fail with `.cancelled`.
    public func cancel() { connection.cancel() }

    /// Answers the TLS challenges of a secure connection (server trust, and
    /// a client certificate when the server asks for one and none is
    /// configured), as a task's handler does: the handshake stops for the
    /// decision, which costs one more handshake. Nil (the default): default
    /// verification. Set it before the first read or write.
    public var challengeHandler: (@Sendable (ChallengeDecision) async -> Void)? {
        get { connection.tlsChallenges.handler }
        set { connection.tlsChallenges.handler = newValue }
    }

    /// `observer` hears each side closing and the end, once each, on the
    /// thread that saw them (hand work off; the classic adapter turns them
    /// into its delegate calls). Set it before the first read or write.
    public func observeLifecycle(_ observer: @escaping @Sendable (StreamLifecycleEvent) -> Void) {
        connection.observe(observer)
    }

    /// Cancelled, failed, or closed by the peer.
    package var hasEnded: Bool { connection.hasEnded }
}
