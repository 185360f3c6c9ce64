import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Removes the files of downloads that nobody came back for.
///
/// Why: a download cancelled with resume data, or one that failed with resume
/// data in its error, keeps its partial file in the download folder so that
/// the resume data can continue it, in this process or a later one. Resume
/// data that is never used left that file behind for good: the default
/// folder lives in the temporary directory, which Debian empties only at
/// boot, so a service that cancels downloads filled its disk over its
/// uptime. `download(for:)` also hands its caller a file in that folder to
/// move, as URLSession's temporary files are.
///
/// What goes: regular files of ours named as this library names them
/// (`download-*.tmp`, never a link or anything else found there) that
/// nothing has written for `lifetime`. A transfer that is still writing
/// keeps its file fresh, and a file reopened from resume data is truncated
/// to its length (which sets its mtime) before that process sweeps.
///
/// When: the first download of a process that uses a folder sweeps it, and
/// then at most once per `interval`, on a utility queue so that no task
/// start waits for a folder listing.
enum StaleDownloadSweep {
    /// How long a partial download (or an unmoved finished one) is kept
    /// after its last write: a day, long enough for resume data kept across
    /// a restart of the program.
    static let lifetime: TimeInterval = 24 * 60 * 60

    /// The least time between two sweeps of one folder by one process, in ns.
    static let interval: UInt64 = 60 * 60 * 1_000_000_000

    /// When each folder was last swept by this process (monotonic ns).
    private static let lastSweep = Mutex<[String: UInt64]>([:])

    /// Sweeps `directory` in the background unless this process did so
    /// less than `interval` ago.
    static func sweepIfDue(_ directory: URL) {
        let now = DispatchTime.now().uptimeNanoseconds
        let due = lastSweep.withLock { swept -> Bool in
            if let last = swept[directory.path], now &- last < interval { return false }
            swept[directory.path] = now
            return true
        }
        guard due else { return }
        DispatchQueue.global(qos: .utility).async {
            _ = sweep(directory, modifiedBefore: Date().addingTimeInterval(-lifetime))
        }
    }

    /// Removes the files of ours in `directory` last modified before
    /// `cutoff`; returns their names. Errors (a folder that is gone, a file
    /// removed meanwhile) leave things as they are: a sweep is a courtesy,
    /// never a reason for a download to fail.
    @discardableResult
    static func sweep(_ directory: URL, modifiedBefore cutoff: Date) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        let cutoffSeconds = Int(cutoff.timeIntervalSince1970.rounded(.down))
        var removed: [String] = []
        for name in names where isOurs(name) {
            let path = directory.appendingPathComponent(name).path
            var info = stat()
            // lstat: a link named like ours is not ours, and is never followed.
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == getuid(),
                info.st_mtim.tv_sec < cutoffSeconds
            else { continue }
            if unlink(path) == 0 { removed.append(name) }
        }
        return removed
    }

    /// The names `DownloadDirectory.createFile` gives (a folder listing's
    /// names never hold a "/").
    static func isOurs(_ name: String) -> Bool {
        name.hasPrefix("download-") && name.hasSuffix(".tmp")
    }
}
