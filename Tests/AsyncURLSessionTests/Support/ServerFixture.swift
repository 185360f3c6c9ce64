import AsyncURLSession
import Foundation
import LoopbackServer
@_exported import TestSupport

/// A session configuration for tests: short timeouts so failures are quick.
func testConfiguration(trusting server: LoopbackServer? = nil) -> SessionConfiguration {
    var configuration = SessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = scaledTimeout(20)
    configuration.tlsTrustRootsPEM = server?.certificatePEM
    return configuration
}

/// Everything a task's event stream produced, in order.
struct RecordedEvents: Sendable {
    var kinds: [String] = []
    var response: HTTPURLResponse?
    var body = Data()
    var metrics: TaskMetrics?
    var error: (any Error)?
    var redirects: [Int] = []
    var challenges: [String] = []
    var uploadProgress: [TransferProgress] = []
    var downloadProgress: [TransferProgress] = []
    var downloadedFile: URL?
    /// Whether the downloaded file holds LoopbackServer's pattern body (its size is the file's).
    var downloadedFileMatchesPattern: Bool?
    var downloadedFileSize: Int?
    var resumedAt: (Int64, Int64)?
    var trailers: ResponseTrailers?
}

/// `providing`: the body a `needBodyStream` decision gets (else its default).
func record(_ task: SessionTask, providing body: [Data]? = nil) async -> RecordedEvents {
    var recorded = RecordedEvents()
    do {
        for try await event in task.events {
            switch event {
            case .informationalResponse(let response):
                recorded.kinds.append("informational \(response.statusCode)")
            case .response(let response, _):
                recorded.kinds.append("response")
                recorded.response = response
            case .redirect(let decision):
                recorded.kinds.append("redirect")
                recorded.redirects.append(decision.response.statusCode)
            case .challenge(let decision):
                recorded.kinds.append("challenge")
                recorded.challenges.append(decision.protectionSpace.authenticationMethod)
            case .data(let chunk):
                if recorded.kinds.last != "data" { recorded.kinds.append("data") }
                recorded.body.append(chunk)
            case .uploadProgress(let progress):
                if recorded.kinds.last != "uploadProgress" { recorded.kinds.append("uploadProgress") }
                recorded.uploadProgress.append(progress)
            case .needBodyStream(let decision):
                recorded.kinds.append("needBodyStream")
                if let body { decision.provide(asyncChunks(body)) }
            case .resumed(let offset, let expected):
                recorded.kinds.append("resumed")
                recorded.resumedAt = (offset, expected)
            case .downloadProgress(let progress):
                if recorded.kinds.last != "downloadProgress" { recorded.kinds.append("downloadProgress") }
                recorded.downloadProgress.append(progress)
            case .downloaded(let url):
                recorded.kinds.append("downloaded")
                // The file exists until the next pull: check it now.
                recorded.downloadedFile = url
                recorded.downloadedFileMatchesPattern = fileMatchesPattern(url)
                recorded.downloadedFileSize = fileSize(url)
            case .trailers(let trailers):
                recorded.kinds.append("trailers")
                recorded.trailers = trailers
            case .willCacheResponse:
                recorded.kinds.append("willCacheResponse")
            case .waitingForConnectivity:
                recorded.kinds.append("waitingForConnectivity")
            case .retrying(let attempt):
                recorded.kinds.append("retrying \(attempt.attempt)")
            case .metrics(let metrics):
                recorded.kinds.append("metrics")
                recorded.metrics = metrics
            }
        }
    } catch {
        recorded.error = error
    }
    return recorded
}

/// `chunks` as the AsyncSequence a streamed body is provided with.
func asyncChunks(_ chunks: [Data]) -> AsyncStream<Data> {
    AsyncStream { continuation in
        for chunk in chunks { continuation.yield(chunk) }
        continuation.finish()
    }
}

extension Error {
    var urlErrorCode: URLError.Code? { (self as? URLError)?.code }
}

/// Compares a file with the loopback server's pattern body in 1 MiB pieces,
/// so a 256 MiB download does not need 512 MiB of test memory.
func fileMatchesPattern(_ url: URL) -> Bool {
    guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
    defer { try? handle.close() }
    var offset = 0
    while true {
        let piece: Data
        do {
            // corelibs answers nil at the end of the file.
            guard let read = try handle.read(upToCount: 1 << 20), !read.isEmpty else { return true }
            piece = read
        } catch {
            return false
        }
        guard piece == LoopbackServer.patternBody(count: piece.count, offset: offset) else { return false }
        offset += piece.count
    }
}

func fileSize(_ url: URL) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue
}

/// Reads `task.events` slower than the loopback delivers (`pause` after
/// each body chunk), so the task's buffer fills between pulls and the hop
/// pauses; returns the body.
func consumeSlowly(_ task: SessionTask, pause: Duration = .milliseconds(2)) async throws -> Data {
    var received = Data()
    for try await event in task.events {
        guard case .data(let chunk) = event else { continue }
        received.append(chunk)
        try await Task.sleep(for: pause)
    }
    return received
}
