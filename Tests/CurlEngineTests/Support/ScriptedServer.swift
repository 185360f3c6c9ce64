// CCurl as well as Glibc: in a clean build (CI, after a test file was added
// to this module) `SOCK_STREAM` was not found through Glibc alone. The
// constant comes from <sys/socket.h>, which CCurl's header includes too;
// ParkedSocketTests imports both for the same reason.
import CCurl
import Foundation
import Glibc
import Synchronization

/// An HTTP/1.1 server on 127.0.0.1 for one connection, answering each
/// request as its script says: after a delay (an empty 200, keeping the
/// connection open), or never.
final class ScriptedServer: Sendable {
    enum Answer: Sendable {
        case after(seconds: Double)
        case never
    }

    let fd: Int32
    let port: UInt16
    private let script: @Sendable (_ requestNumber: Int) -> Answer
    private let seen = Atomic<Int>(0)

    var requestsSeen: Int { seen.load(ordering: .relaxed) }
    var url: String { "http://127.0.0.1:\(port)/" }

    struct Failure: Error {
        let call: String
        let code: Int32
    }

    /// `script` gets each request's number on the connection, from 1.
    init(_ script: @escaping @Sendable (_ requestNumber: Int) -> Answer) throws {
        self.script = script
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
            while let end = headEnd(pending) {
                pending.removeFirst(end)
                let number = seen.add(1, ordering: .relaxed).newValue
                guard case .after(let seconds) = script(number) else { continue }
                if seconds > 0 { usleep(UInt32(seconds * 1_000_000)) }
                let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)
                _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
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
