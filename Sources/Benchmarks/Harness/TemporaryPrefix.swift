// The temporary folder that holds everything a run creates: nginx's config,
// pid file, logs and temp paths, the certificates, the served files and the
// clients' output. Created with mkdtemp under the system temp folder, removed
// at the end.
#if canImport(Glibc)
import Glibc
#endif
import Foundation

struct TemporaryPrefix {
    let path: String

    var www: String { path + "/www" }
    var logs: String { path + "/logs" }
    var tls: String { path + "/tls" }
    var runs: String { path + "/runs" }

    static func create() throws -> TemporaryPrefix {
        let base = FileManager.default.temporaryDirectory.path
        var template = Array((base + "/asyncurlsession-bench-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else {
            throw HarnessError.setup("mkdtemp failed in \(base): \(String(cString: strerror(errno)))")
        }
        let prefix = TemporaryPrefix(path: String(cString: created))
        // nginx's workers run as "nobody" when the harness is root: they must be
        // able to traverse the prefix and read the served files.
        chmod(prefix.path, 0o755)
        for folder in [prefix.www, prefix.www + "/files", prefix.www + "/drip", prefix.logs, prefix.tls, prefix.runs, prefix.path + "/tmp"] {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        chmod(prefix.tls, 0o700)
        return prefix
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

enum HarnessError: Error, CustomStringConvertible {
    case setup(String)
    case server(String)
    /// `--strict`: cells whose runs failed their checks, one line each.
    case failedRuns([String])

    var description: String {
        switch self {
        case .setup(let message): "setup failed: \(message)"
        case .server(let message): "nginx: \(message)"
        case .failedRuns(let cells):
            "\(cells.count) cell(s) failed (--strict); see the tables above:\n" + cells.joined(separator: "\n")
        }
    }
}
