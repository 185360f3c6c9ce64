// Small socket helpers on 127.0.0.1 only: picking free ports, checking that a
// port accepts, and a one-shot HTTP/1.0 GET (for nginx's stub_status).
#if canImport(Glibc)
import Glibc
#endif
import Foundation

enum LoopbackSocket {
    private static func loopbackAddress(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func withSockaddr<T>(_ address: sockaddr_in, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var copy = address
        return withUnsafePointer(to: &copy) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// `count` distinct ports the kernel reports free on 127.0.0.1 right now
    /// (bound to port 0, read back, closed). A race with another program is
    /// possible; the caller retries nginx's start with new ports.
    static func freePorts(_ count: Int) throws -> [UInt16] {
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        var ports: [UInt16] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw HarnessError.setup("socket() failed") }
            sockets.append(fd)
            let bound = withSockaddr(loopbackAddress(port: 0)) { bind(fd, $0, $1) }
            guard bound == 0 else { throw HarnessError.setup("bind(127.0.0.1:0) failed") }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            ports.append(UInt16(bigEndian: address.sin_port))
        }
        return ports
    }

    private static func connected(port: UInt16, timeoutSeconds: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let rc = withSockaddr(loopbackAddress(port: port)) { connect(fd, $0, $1) }
        guard rc == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// True when something accepts connections on 127.0.0.1:port.
    static func accepts(port: UInt16) -> Bool {
        guard let fd = connected(port: port, timeoutSeconds: 1) else { return false }
        close(fd)
        return true
    }

    /// GET http://127.0.0.1:port/path with HTTP/1.0 and returns the body, or
    /// nil on any failure. Bounded by a 5 s socket timeout and a size cap.
    static func get(port: UInt16, path: String) -> String? {
        guard let fd = connected(port: port, timeoutSeconds: 5) else { return nil }
        defer { close(fd) }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else { return nil }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while response.count < 1 << 20 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            response.append(contentsOf: buffer[0..<n])
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return nil }
        return String(text[split.upperBound...])
    }
}
