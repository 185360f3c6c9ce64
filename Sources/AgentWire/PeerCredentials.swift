import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Who is at the other end of a Unix-domain socket, as the kernel says
/// (SO_PEERCRED: the credentials of the process that connected, or that
/// listens, taken when the connection was made; they cannot be forged).
///
/// The agent serves its own user only: the folder's mode already keeps
/// others out, and this check holds even where it was loosened.
package struct PeerCredentials: Sendable, Equatable {
    package let processID: pid_t
    package let userID: uid_t
    package let groupID: gid_t

    package init(processID: pid_t, userID: uid_t, groupID: gid_t) {
        self.processID = processID
        self.userID = userID
        self.groupID = groupID
    }

    /// The credentials of the peer of `socket`.
    package static func of(socket: Int32) throws(AgentWireError) -> PeerCredentials {
        // struct ucred (pid, uid, gid: three 32-bit values), which Glibc's
        // Swift module hides behind _GNU_SOURCE.
        var credentials: (pid_t, uid_t, gid_t) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(pid_t, uid_t, gid_t)>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
            length == socklen_t(MemoryLayout<(pid_t, uid_t, gid_t)>.size)
        else {
            throw AgentWireError("cannot read the peer's credentials: \(String(cString: strerror(errno)))")
        }
        return PeerCredentials(processID: credentials.0, userID: credentials.1, groupID: credentials.2)
    }

    /// Refuses a peer that runs as another user than `expected`.
    package func requireUser(_ expected: uid_t = getuid()) throws(AgentWireError) {
        guard userID == expected else {
            throw AgentWireError(
                "refused a connection from process \(processID) of user \(userID): the agent serves user \(expected) only")
        }
    }
}
