// --download (and --background): the request through `session.downloadTask(with:)`.
// The body goes to a file, never through this process's memory as `.data`;
// the finished file's size is counted as the bytes received, and the file is
// deleted at once (a 1 GiB file per run would otherwise pile up until the
// library's sweep).
import AsyncURLSession
import BenchClientSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

enum Download {
    /// One download: the final status, the file's size, the HTTP version
    /// (`httpVersion` maps the ALPN name, as the data path does).
    static func perform(
        session: Session, request: URLRequest, expectedStatus: Int,
        httpVersion: @Sendable (String) -> String
    ) async -> RequestOutcome {
        let task = session.downloadTask(with: request)
        task.resume()
        var status = 0
        var received = 0
        var version: String?
        var delivered = false
        do {
            for try await event in task.events {
                switch event {
                case .response(let response, _): // the decision defaults to "allow"
                    status = response.statusCode
                case .downloaded(let file):
                    // The file is ours until the next event: size it, then remove it.
                    delivered = true
                    received = fileSize(file.path) ?? 0
                    unlink(file.path)
                case .metrics(let metrics):
                    version = metrics.transactionMetrics.last?.networkProtocolName.map(httpVersion)
                default:
                    break // progress: the file's size is the count
                }
            }
        } catch {
            return .failure(error)
        }
        guard status == expectedStatus else { return .unexpectedStatus(status) }
        guard delivered else { return RequestOutcome(error: "the download ended without a downloaded(URL) event") }
        return RequestOutcome(bytesReceived: received, httpVersion: version)
    }

    /// The size of the file at `path`, nil when it cannot be read.
    private static func fileSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }
}
