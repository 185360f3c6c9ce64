import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback socket that listens and never accepts (backlog 0): the first
/// connection completes in the kernel and what a client sends stays in the
/// socket's buffers, unread (a stalled upload); once `fill()` took that
/// place, a new connection's SYN is dropped and its connect hangs (a
/// connect timeout). Closed by `close()`.
public final class SilentListener: Sendable {
    public let port: Int
    private let listenerFD: Int32
    private let fillerFD: Int32

    /// - Parameter filled: take the one place in the accept queue now, so
    ///   later connects hang.
    public init(filled: Bool = false) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && listen(fd, 0) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        listenerFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        guard filled else {
            fillerFD = -1
            return
        }
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var target = address
        let connected = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard filler >= 0, connected else {
            if filler >= 0 { Glibc.close(filler) }
            Glibc.close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        fillerFD = filler
    }

    public func close() {
        if fillerFD >= 0 { Glibc.close(fillerFD) }
        Glibc.close(listenerFD)
    }
}
