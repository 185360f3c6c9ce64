import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback port held by a socket that is bound but not listening:
/// connections to it are refused, and no other server of the test run can
/// take it until `release()`.
///
/// The port is picked below Linux's ephemeral range (32768 and up), where
/// neither `bind` to port 0 nor a client's `connect` ever lands: a port
/// from that range, once released, was taken by another test's connection
/// before the late server could bind it (EADDRINUSE under the full suite).
public final class PortReservation: Sendable {
    public let port: Int
    private let socketFD: Int32

    public init() throws {
        for _ in 0..<200 {
            let candidate = Int.random(in: 20_000..<32_000)
            // CLOEXEC: a child process the suite spawns (curl, fetch) would
            // otherwise inherit it and hold the port after `release()`.
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw POSIXError(.EMFILE) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(candidate).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if bound == 0 {
                socketFD = fd
                port = candidate
                return
            }
            close(fd)
        }
        throw POSIXError(.EADDRINUSE)
    }

    /// Frees the port, for a server to bind right after.
    public func release() { close(socketFD) }
}
