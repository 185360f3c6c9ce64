import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// Records the stream delegate calls by name.
final class StreamRecorder: NSObject, URLSessionStreamDelegate, Sendable {
    private let recorded = Mutex<[String]>([])
    private let completion = Mutex<(any Error)?>(nil)
    let completed = Signal()

    var calls: [String] { recorded.withLock { $0 } }
    var completionError: (any Error)? { completion.withLock { $0 } }

    func urlSession(_ session: URLSession, readClosedFor streamTask: URLSessionStreamTask) {
        recorded.withLock { $0.append("readClosedFor") }
    }

    func urlSession(_ session: URLSession, writeClosedFor streamTask: URLSessionStreamTask) {
        recorded.withLock { $0.append("writeClosedFor") }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        completion.withLock { $0 = error }
        recorded.withLock { $0.append("didCompleteWithError") }
        completed.fire()
    }
}

/// `URLSessionStreamTask` used as legacy code uses it: HTTP/1.1 spoken by
/// hand to the loopback server, with completion handlers and a delegate.
@Suite struct StreamTaskTests {
    static func request(_ path: String) -> Data {
        Data("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
    }

    /// Everything until the peer closes, read with completion handlers.
    static func readToEnd(_ task: URLSessionStreamTask) async throws -> Data {
        var all = Data()
        for _ in 0..<10_000 {
            let (data, atEOF, error) = await withCheckedContinuation { continuation in
                task.readData(ofMinLength: 1, maxLength: 65536, timeout: 10) { data, atEOF, error in
                    continuation.resume(returning: (data, atEOF, error))
                }
            }
            if let error { throw error }
            all.append(data ?? Data())
            if atEOF { return all }
        }
        return all
    }

    @Test func handWrittenRequest_getsItsResponse_thenReadClosedAndCompletion() async throws {
        try await withServer { server in
            let delegate = StreamRecorder()
            let task = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
                .streamTask(withHostName: "127.0.0.1", port: server.port)
            #expect(task.state == .suspended)
            task.resume()
            #expect(task.state == .running)
            let written: (any Error)? = await withCheckedContinuation { continuation in
                task.write(Self.request("/bytes/10"), timeout: 10) { continuation.resume(returning: $0) }
            }
            #expect(written == nil)
            let response = try await Self.readToEnd(task)
            #expect(String(decoding: response.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK")
            #expect(response.suffix(10) == LoopbackServer.patternBody(count: 10))
            await delegate.completed.wait()
            #expect(delegate.calls == ["readClosedFor", "didCompleteWithError"])
            #expect(delegate.completionError == nil)
            #expect(task.state == .completed)
            #expect(task.countOfBytesReceived == Int64(response.count))
        }
    }

    @Test func startSecureConnection_afterResume_speaksTLS() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: false)) { server in
            let configuration = URLSessionConfiguration.default
            configuration.tlsTrustRootsPEM = server.certificatePEM
            let task = URLSession(configuration: configuration).streamTask(withHostName: "127.0.0.1", port: server.port)
            task.resume()
            task.startSecureConnection()
            try await task.write(Self.request("/bytes/5"), timeout: 10)
            var response = Data()
            while true {
                let (data, atEOF) = try await task.readData(ofMinLength: 1, maxLength: 65536, timeout: 10)
                response.append(data ?? Data())
                if atEOF { break }
            }
            #expect(response.suffix(5) == LoopbackServer.patternBody(count: 5))
        }
    }

    /// The loopback server closes a connection whose request the FIN cut
    /// short, so the end is the peer's: read closed, then a clean completion.
    @Test func closeWrite_tellsTheDelegate_thenThePeersEndCompletesTheTask() async throws {
        try await withServer { server in
            let delegate = StreamRecorder()
            let task = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
                .streamTask(withHostName: "127.0.0.1", port: server.port)
            task.resume()
            try await task.write(Data("GET /slow-headers HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8), timeout: 10)
            task.closeWrite()
            let response = try await Self.readToEnd(task)
            #expect(response.isEmpty)
            await delegate.completed.wait()
            #expect(delegate.calls == ["writeClosedFor", "readClosedFor", "didCompleteWithError"])
            #expect(delegate.completionError == nil)
        }
    }

    /// No FIN, so the server keeps the connection: the end is the cancel.
    /// (Cancelling right after `closeWrite()` would race the server's close:
    /// CI once saw the peer's end win, as it may.)
    @Test func cancel_completesWithCancelled_andLaterWritesFail() async throws {
        try await withServer { server in
            let delegate = StreamRecorder()
            let task = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
                .streamTask(withHostName: "127.0.0.1", port: server.port)
            task.resume()
            try await task.write(Data("GET /slow-headers HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8), timeout: 10)
            task.cancel()
            await delegate.completed.wait()
            #expect(delegate.calls == ["didCompleteWithError"])
            #expect((delegate.completionError as? URLError)?.code == .cancelled)
            let error = await #expect(throws: URLError.self) { try await task.write(Data("x".utf8), timeout: 1) }
            #expect(error?.code == .cancelled)
        }
    }

    @Test func refusedConnection_failsTheRead_andCompletesWithTheError() async throws {
        let reservation = try PortReservation()
        defer { reservation.release() }
        let delegate = StreamRecorder()
        let task = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
            .streamTask(withHostName: "127.0.0.1", port: reservation.port)
        task.resume()
        try await withTimeLimit {
            let error = await #expect(throws: URLError.self) {
                _ = try await task.readData(ofMinLength: 1, maxLength: 10, timeout: 5)
            }
            #expect(error?.code == .cannotConnectToHost)
            await delegate.completed.wait()
        }
        #expect((delegate.completionError as? URLError)?.code == .cannotConnectToHost)
        #expect((task.error as? URLError)?.code == .cannotConnectToHost)
    }
}
