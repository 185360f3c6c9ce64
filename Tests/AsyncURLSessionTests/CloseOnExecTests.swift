import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A program that starts another (the background agent, a helper tool)
/// must not hand it the session's connections.
@Suite struct CloseOnExecTests {
    @Test func pooledConnection_isCloseOnExec() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let (body, _) = try await session.data(from: server.url("/bytes/10"))
            #expect(body.count == 10)
            let port = try #require(server.url("/").port)
            // The connection stays pooled (keep-alive) after the response.
            let sockets = Self.descriptors(connectedToPort: port)
            #expect(!sockets.isEmpty, "no connection to the server found")
            for socket in sockets {
                #expect(fcntl(socket, F_GETFD) & FD_CLOEXEC != 0, "descriptor \(socket) would leak into a child")
            }
        }
    }

    /// This process's TCP sockets whose peer listens on `port` (the
    /// server's own accepted sockets have that port on their local side).
    private static func descriptors(connectedToPort port: Int) -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { Int32($0) }.filter { descriptor in
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let found = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
            }
            return found == 0 && address.sin_family == sa_family_t(AF_INET)
                && Int(UInt16(bigEndian: address.sin_port)) == port
        }
    }
}
