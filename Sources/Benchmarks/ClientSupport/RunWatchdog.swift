import Foundation

/// Bounds a whole check run (openapi-check, trace-check): a client that
/// ignores cancellation or never answers would otherwise keep the process
/// alive past its checks' own limits.
public enum RunWatchdog {
    /// After `seconds`, prints that `name` gave up and exits with status 2.
    public static func start(seconds: Double, name: String) {
        let watchdog = Thread {
            Thread.sleep(forTimeInterval: seconds)
            FileHandle.standardError.write(Data("\(name): no end after \(Int(seconds)) s; giving up\n".utf8))
            exit(2)
        }
        watchdog.start()
    }
}
