import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where one user's background transfer agent listens: a folder only that
/// user can enter, holding the agent's Unix-domain socket.
///
/// `$XDG_RUNTIME_DIR/AsyncURLSession` when the variable names an absolute
/// folder (systemd makes it per user, 0700, emptied at logout), else
/// `/tmp/AsyncURLSession-<uid>`. The second lives in a folder everyone can
/// write, so another user could make it first, or put a link there: a
/// folder that is not a real directory of ours, or that others can enter,
/// is refused rather than repaired, and the error says what to remove.
package struct AgentFolder: Sendable, Equatable {
    package let url: URL

    package init(url: URL) { self.url = url }

    /// The folder for this process's user, from `environment`.
    package static func forCurrentUser(environment: [String: String] = ProcessInfo.processInfo.environment) -> AgentFolder {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return AgentFolder(url: URL(fileURLWithPath: runtime).appendingPathComponent("AsyncURLSession"))
        }
        return AgentFolder(url: URL(fileURLWithPath: "/tmp").appendingPathComponent("AsyncURLSession-\(getuid())"))
    }

    /// The agent's socket.
    package var socketPath: String { url.appendingPathComponent("agent.sock").path }

    /// Creates the folder 0700 if it is missing, then checks it: a directory
    /// (not a link), owned by this user, closed to everyone else.
    package func prepare() throws(AgentWireError) {
        if mkdir(url.path, 0o700) != 0, errno != EEXIST {
            throw AgentWireError("cannot create the agent folder \(url.path): \(String(cString: strerror(errno)))")
        }
        try check()
    }

    /// The checks of `prepare`, without creating anything.
    package func check() throws(AgentWireError) {
        var info = stat()
        guard lstat(url.path, &info) == 0 else {
            throw AgentWireError("cannot read the agent folder \(url.path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw AgentWireError("\(url.path) is not a directory (a link or a file?); remove it so the agent can make its folder")
        }
        guard info.st_uid == getuid() else {
            throw AgentWireError("\(url.path) belongs to user \(info.st_uid), not to this user (\(getuid())); remove it or set XDG_RUNTIME_DIR")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw AgentWireError(
                "\(url.path) is open to other users (mode \(String(info.st_mode & 0o777, radix: 8))); make it 0700 or remove it")
        }
    }
}

/// What went wrong talking to, or preparing for, the background agent.
package struct AgentWireError: Error, CustomStringConvertible, Equatable {
    package let description: String
    /// The system's error number, where one caused it.
    package let errno: Int32?

    package init(_ description: String, errno: Int32? = nil) {
        self.description = description
        self.errno = errno
    }
}
