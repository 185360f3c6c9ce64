import Foundation
import Glibc
import Synchronization
import Testing

@testable import CurlEngine

/// A transfer started while its engine thread sleeps with nothing in flight
/// runs its first turn on the starting thread; the sleeping thread must still
/// wake for the transfer's deadlines, which it did not know when it went to
/// sleep. Runs on a private engine thread, so no other test's transfer keeps
/// it awake.
@Suite struct InlineTurnTests {
    @Test func startedInline_onAReusedConnection_idleTimeoutStillFires() throws {
        let shard = EngineShard(index: 0)
        shard.startThread(executor: EngineExecutor(shards: [shard]))
        let sessionID = EngineSessionID(serial: 1, shardCount: 1)
        shard.commands.enqueue(.openSession(sessionID, EngineSessionOptions(maximumConnectionsPerHost: 0)))
        let placement = TransferPlacement(session: sessionID)
        let server = try OneAnswerServer()
        defer { server.close() }
        let url = "http://127.0.0.1:\(server.port)/"

        // The first request opens the connection and is answered.
        let first = CompletionRecorder()
        shard.commands.enqueue(.start(
            TransferID(serial: 2, shard: placement.place(url, from: nil)), placement,
            request(url, idleTimeout: 10), collectsMetrics: false, first))
        #expect(first.wait(seconds: 10).map { $0.error == nil } == true)

        // The second goes out on that connection from an inline turn: once
        // it is sent, no socket event will come, so only the timer the turn
        // armed wakes the sleeping thread for the idle timeout.
        #expect(waitUntil(seconds: 5) { shard.commands.sleepsIdle }, "the engine thread went to sleep with nothing in flight")
        let inlineBefore = shard.commands.inlineTurnsRun.load(ordering: .relaxed)
        let second = CompletionRecorder()
        let started = Date()
        shard.commands.enqueue(.start(
            TransferID(serial: 3, shard: placement.place(url, from: nil)), placement,
            request(url, idleTimeout: 0.3), collectsMetrics: false, second))
        #expect(shard.commands.inlineTurnsRun.load(ordering: .relaxed) == inlineBefore + 1, "the start ran on this thread")
        let outcome = second.wait(seconds: 10)
        #expect(outcome?.error?.code == .timedOut)
        #expect(Date().timeIntervalSince(started) >= 0.3)
        #expect(server.requestsSeen == 2, "the second request was sent on the reused connection")
    }

    private func request(_ url: String, idleTimeout: Double) -> TransferRequest {
        TransferRequest(
            url: url, method: "GET", headers: [], body: .none, idleTimeout: idleTimeout, resourceTimeout: 30,
            trustRootsPEM: nil, acceptEncoding: nil)
    }

    private func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(1_000)
        }
        return condition()
    }
}

/// An HTTP/1.1 server on 127.0.0.1 for one connection: it answers the first
/// request on it (keeping it open) and never the ones after.
private final class OneAnswerServer: Sendable {
    let fd: Int32
    let port: UInt16
    private let seen = Atomic<Int>(0)

    var requestsSeen: Int { seen.load(ordering: .relaxed) }

    struct Failure: Error {
        let call: String
        let code: Int32
    }

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(call: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            throw Failure(call: "bind/listen", code: code)
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            throw Failure(call: "getsockname", code: code)
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in serveOneConnection() }
        thread.start()
    }

    /// Blocking, on its own thread: ends when the client closes the
    /// connection or `close()` shuts the listener down.
    private func serveOneConnection() {
        let connection = accept(fd, nil, nil)
        guard connection >= 0 else { return }
        defer { _ = Glibc.close(connection) }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            pending += buffer[0..<count]
            // Count each request head; answer only the first.
            while let end = headEnd(pending) {
                pending.removeFirst(end)
                if seen.add(1, ordering: .relaxed).newValue == 1 {
                    let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)
                    _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
            }
        }
    }

    private func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count where bytes[index - 3] == 13 && bytes[index - 2] == 10 && bytes[index - 1] == 13 && bytes[index] == 10 {
            return index + 1
        }
        return nil
    }

    func close() {
        _ = shutdown(fd, Int32(SHUT_RDWR))
        _ = Glibc.close(fd)
    }
}

/// Records a transfer's outcome for a waiting test.
private final class CompletionRecorder: TransferDelegate {
    private let outcome = Mutex<TransferOutcome?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func transferDidReceiveHead(_ head: consuming ResponseHead, of id: TransferID) {}
    func transferDidReceiveBody(_ bytes: UnsafeRawBufferPointer, of id: TransferID) -> BodyVerdict { .accepted }
    func transferDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64, of id: TransferID) {}

    func transferDidComplete(_ outcome: TransferOutcome, of id: TransferID) {
        self.outcome.withLock { $0 = outcome }
        done.signal()
    }

    func wait(seconds: Double) -> TransferOutcome? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return outcome.withLock { $0 }
    }
}
