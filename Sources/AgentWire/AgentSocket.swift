import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One end of a Unix-domain stream socket between a program and the agent,
/// speaking framed JSON. Blocking, with a receive timeout: each end is used
/// by one thread of its own (never a Swift concurrency thread).
package final class AgentSocket {
    package let fd: Int32
    private var decoder = AgentFrameDecoder()

    private init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    /// Connects to the agent listening at `path`.
    package static func connect(to path: String) throws(AgentWireError) -> AgentSocket {
        let socket = try AgentSocket(fd: makeSocket())
        let result = try withAddress(path) { address, length in Glibc.connect(socket.fd, address, length) }
        guard result == 0 else {
            throw AgentWireError("cannot reach the agent at \(path): \(String(cString: strerror(errno)))", errno: errno)
        }
        return socket
    }

    /// Listens at `path`, replacing a socket file left by an agent that is
    /// gone (the caller holds the agent lock, so none is running).
    package static func listen(at path: String) throws(AgentWireError) -> AgentSocket {
        let socket = try AgentSocket(fd: makeSocket())
        unlink(path)
        let bound = try withAddress(path) { address, length in bind(socket.fd, address, length) }
        guard bound == 0, Glibc.listen(socket.fd, 64) == 0 else {
            throw AgentWireError("cannot listen at \(path): \(String(cString: strerror(errno)))")
        }
        chmod(path, 0o600)
        return socket
    }

    /// The next program's connection; waits for it.
    package func accept() throws(AgentWireError) -> AgentSocket {
        while true {
            // accept4 is _GNU_SOURCE-only in Swift's Glibc: accept, then CLOEXEC.
            let client = Glibc.accept(fd, nil, nil)
            if client >= 0 {
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                return AgentSocket(fd: client)
            }
            if errno == EINTR || errno == ECONNABORTED { continue }
            throw AgentWireError("the agent cannot accept connections: \(String(cString: strerror(errno)))")
        }
    }

    /// Gives up on a `receive` after `seconds` without a byte.
    package func setReceiveTimeout(_ seconds: Double) {
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    package func send<Message: Encodable>(_ message: Message) throws(AgentWireError) {
        let encoded: Data
        do { encoded = try JSONEncoder().encode(message) } catch {
            throw AgentWireError("cannot encode a message for the agent: \(error)")
        }
        let framed = try AgentFrameEncoder.frame(encoded)
        var failure: Int32 = 0
        framed.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let sent = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += sent
            }
        }
        if failure != 0 {
            throw AgentWireError("the connection to the agent broke: \(String(cString: strerror(failure)))", errno: failure)
        }
    }

    /// The next message, or nil when the peer closed the connection.
    package func receive<Message: Decodable>(_ type: Message.Type) throws(AgentWireError) -> Message? {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            if let frame = try decoder.next() {
                do { return try JSONDecoder().decode(type, from: frame) } catch {
                    throw AgentWireError("a message from the agent's peer does not decode: \(error)")
                }
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 {
                if decoder.pendingCount > 0 { throw AgentWireError("the peer closed the connection mid-message") }
                return nil
            }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    throw AgentWireError("the agent did not answer in time")
                }
                throw AgentWireError("the connection to the agent broke: \(String(cString: strerror(errno)))", errno: errno)
            }
            decoder.append(Data(chunk[0..<count]))
        }
    }

    /// Whether the peer closed its end (or the connection broke), without
    /// waiting; for a side that only sends.
    package func peerHasClosed() -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 0) > 0 else { return false }
        if entry.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return true }
        // Readable: the peer sends nothing on such a connection, so it is the end.
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) <= 0
    }

    /// Ends the connection in both directions now; another thread blocked
    /// on it wakes up (its receive sees the end).
    package func shutDown() {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    private static func makeSocket() throws(AgentWireError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw AgentWireError("cannot make a socket: \(String(cString: strerror(errno)))") }
        return fd
    }

    private static func withAddress(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) throws(AgentWireError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw AgentWireError("the agent's socket path \(path) is longer than \(capacity - 1) bytes; set XDG_RUNTIME_DIR to a shorter folder")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
