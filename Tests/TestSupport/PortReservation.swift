import Foundation
import Synchronization
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
///
/// `forALateServer`: the port is for a server the test starts later on it.
/// Then the socket is bound with SO_REUSEADDR, as LoopbackServer binds, so
/// the server binds while the reservation still holds the port (Linux lets
/// two such sockets share a port while neither listens) and the test
/// releases it after: a release first left a moment in which another
/// test's reservation took the port (EADDRINUSE in a full run). Other
/// reservations bind without it, which keeps them exclusive.
public final class PortReservation: Sendable {
    public let port: Int
    private let socketFD: Int32

    public init(forALateServer: Bool = false) throws {
        for _ in 0..<200 {
            let candidate = Int.random(in: 20_000..<32_000)
            // CLOEXEC: a child process the suite spawns (curl, fetch) would
            // otherwise inherit it and hold the port after `release()`.
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw POSIXError(.EMFILE) }
            if forALateServer {
                var one: Int32 = 1
                setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            }
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

    private let released = Atomic<Bool>(false)

    /// Frees the port. Once only: a second close would close whatever
    /// descriptor took the number meanwhile (another test's socket).
    public func release() {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        close(socketFD)
    }
}
