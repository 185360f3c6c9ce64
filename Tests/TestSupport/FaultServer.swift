import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A raw-socket HTTP/1.1 server on 127.0.0.1 that misbehaves on purpose:
/// each connection plays a script of steps (bytes, pauses, a half-close, a
/// reset) that no well-behaved server library would produce. For the
/// fault-injection tests; the real server is `LoopbackServer`.
///
/// Connection n plays `scripts[n]` (the last script for every later one).
/// Each connection has a thread of its own; the server stops (and closes
/// every socket) at `stop()`.
public final class FaultServer: Sendable {
    public enum Step: Sendable {
        /// Reads a request head (up to its blank line), and its body when it
        /// has a Content-Length. Fails the script if the peer closes first.
        case readRequest
        case send(String)
        case sendBytes([UInt8])
        /// The same bytes, `count` times.
        case repeated(String, count: Int)
        case pause(milliseconds: Int)
        /// Sends `text` a byte at a time, `milliseconds` apart.
        case trickle(String, milliseconds: Int)
        /// shutdown(SHUT_WR): the peer reads end-of-stream, our side stays open.
        case halfClose
        /// Close with SO_LINGER 0: the peer gets a TCP reset.
        case reset
        case close
        /// Keeps the connection open (until `stop()`), reading and discarding.
        case hold
        /// Sends one unmasked WebSocket frame (FIN set) as a server does.
        case sendFrame(opcode: UInt8, payload: [UInt8])
        /// Reads one WebSocket frame and checks it: FIN set, `opcode`,
        /// masked (as every client frame must be), and `payload` once
        /// unmasked. A mismatch is recorded (`scriptFailures`) and ends the
        /// script, as does the peer closing first.
        case expectFrame(opcode: UInt8, payload: [UInt8])
    }

    public let port: Int
    private let listener: Int32
    private let scripts: [[Step]]
    private let state = Mutex(State())

    private struct State {
        var stopped = false
        var connections: [Int32] = []
        var accepted = 0
        var requests: [String] = []
        var scriptFailures: [String] = []
    }

    public init(_ scripts: [[Step]]) throws {
        precondition(!scripts.isEmpty)
        self.scripts = scripts
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FaultServerError("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw FaultServerError("bind/listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "FaultServer.accept"
        thread.start()
    }

    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// Connections accepted so far.
    public var acceptedConnections: Int { state.withLock { $0.accepted } }

    /// The request heads read so far, in order.
    public var requests: [String] { state.withLock { $0.requests } }

    /// What `expectFrame` steps found wrong, in order.
    public var scriptFailures: [String] { state.withLock { $0.scriptFailures } }

    /// Stops accepting and closes every connection (idempotent).
    public func stop() {
        // Under the lock: a connection's descriptor is closed only after it
        // left the list under this lock, so every one shut down here is
        // still ours (not a number another server's socket got since).
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            for socket in state.connections { shutdown(socket, Int32(SHUT_RDWR)) }
        }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    deinit {
        stop()
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let index = state.withLock { state -> Int? in
                guard !state.stopped else { return nil }
                state.connections.append(connection)
                state.accepted += 1
                return state.accepted - 1
            }
            guard let index else {
                close(connection)
                return
            }
            var yes: Int32 = 1
            setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            let script = scripts[min(index, scripts.count - 1)]
            let thread = Thread { [self] in play(script, on: connection) }
            thread.name = "FaultServer.connection"
            thread.start()
        }
    }

    private func play(_ script: [Step], on connection: Int32) {
        var pending: [UInt8] = []
        defer {
            state.withLock { $0.connections.removeAll { $0 == connection } }
            close(connection)
        }
        for step in script {
            switch step {
            case .readRequest:
                guard let head = readRequest(connection, &pending) else { return }
                state.withLock { $0.requests.append(head) }
            case .send(let text):
                guard write(Array(text.utf8), to: connection) else { return }
            case .sendBytes(let bytes):
                guard write(bytes, to: connection) else { return }
            case .repeated(let text, let count):
                let bytes = Array(text.utf8)
                for _ in 0..<count where !write(bytes, to: connection) { return }
            case .pause(let milliseconds):
                usleep(useconds_t(milliseconds * 1000))
            case .trickle(let text, let milliseconds):
                for byte in text.utf8 {
                    guard write([byte], to: connection) else { return }
                    usleep(useconds_t(milliseconds * 1000))
                }
            case .halfClose:
                shutdown(connection, Int32(SHUT_WR))
            case .reset:
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                return
            case .close:
                return
            case .hold:
                var buffer = [UInt8](repeating: 0, count: 4096)
                while recv(connection, &buffer, buffer.count, 0) > 0 {}
                return
            case .sendFrame(let opcode, let payload):
                guard write(Self.serverFrame(opcode: opcode, payload: payload), to: connection) else { return }
            case .expectFrame(let opcode, let payload):
                let problem = readFrame(connection, &pending).map { frame -> String? in
                    frame.fin && frame.opcode == opcode && frame.masked && frame.payload == payload
                        ? nil : "expected opcode \(opcode) with \(payload), got \(frame)"
                } ?? "the client closed before a frame with opcode \(opcode)"
                if let problem {
                    state.withLock { $0.scriptFailures.append(problem) }
                    return
                }
            }
        }
        // The script ended: a graceful close after the peer is done reading.
        shutdown(connection, Int32(SHUT_WR))
        var buffer = [UInt8](repeating: 0, count: 4096)
        var rounds = 0
        while rounds < 100, recv(connection, &buffer, buffer.count, 0) > 0 { rounds += 1 }
    }

    static func serverFrame(opcode: UInt8, payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode]
        switch payload.count {
        case ..<126: frame.append(UInt8(payload.count))
        case ..<65536: frame += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: frame += [127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        return frame + payload
    }

    private struct ReceivedFrame: CustomStringConvertible {
        var fin: Bool
        var opcode: UInt8
        var masked: Bool
        var payload: [UInt8]
        var description: String { "fin \(fin) opcode \(opcode) masked \(masked) payload \(payload)" }
    }

    /// One WebSocket frame (unmasked), or nil when the peer closed first.
    private func readFrame(_ connection: Int32, _ pending: inout [UInt8]) -> ReceivedFrame? {
        func need(_ count: Int) -> Bool {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while pending.count < count {
                let read = recv(connection, &buffer, buffer.count, 0)
                guard read > 0 else { return false }
                pending += buffer[0..<read]
            }
            return true
        }
        guard need(2) else { return nil }
        let masked = pending[1] & 0x80 != 0
        var length = Int(pending[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard need(4) else { return nil }
            length = Int(pending[2]) << 8 | Int(pending[3])
            offset = 4
        } else if length == 127 {
            guard need(10) else { return nil }
            length = pending[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        let maskLength = masked ? 4 : 0
        guard need(offset + maskLength + length) else { return nil }
        let mask = Array(pending[offset..<(offset + maskLength)])
        let start = offset + maskLength
        let payload = (0..<length).map { index in
            masked ? pending[start + index] ^ mask[index % 4] : pending[start + index]
        }
        let frame = ReceivedFrame(fin: pending[0] & 0x80 != 0, opcode: pending[0] & 0x0F, masked: masked, payload: payload)
        pending.removeFirst(start + length)
        return frame
    }

    private func write(_ bytes: [UInt8], to connection: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// The next request's head (and body, by Content-Length), or nil when
    /// the peer closed first.
    private func readRequest(_ connection: Int32, _ pending: inout [UInt8]) -> String? {
        let blankLine: [UInt8] = [13, 10, 13, 10]
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = pending.firstRange(of: blankLine) {
                let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
                pending.removeSubrange(..<end.upperBound)
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                while pending.count < length {
                    let count = recv(connection, &buffer, buffer.count, 0)
                    guard count > 0 else { return nil }
                    pending += buffer[0..<count]
                }
                pending.removeFirst(length)
                return head
            }
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            pending += buffer[0..<count]
        }
    }
}

public struct FaultServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body` with a fault server playing `scripts`, stopped afterwards,
/// within `timeLimit` seconds.
public func withFaultServer<T: Sendable>(
    _ scripts: [[FaultServer.Step]], timeLimit: Double = 30,
    _ body: @escaping @Sendable (FaultServer) async throws -> T
) async throws -> T {
    let server = try FaultServer(scripts)
    defer { server.stop() }
    return try await withTimeLimit(timeLimit) { try await body(server) }
}
