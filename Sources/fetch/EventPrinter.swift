import AsyncURLSession
import Foundation

/// `--events`: one line per task event as it arrives.
struct EventPrinter {
    func print(_ events: AsyncThrowingStream<TaskEvent, any Error>) async throws {
        var chunks = 0
        var bytes = 0
        for try await event in events {
            Swift.print(Self.describe(event, chunkNumber: &chunks, totalBytes: &bytes))
        }
        Swift.print("completed: \(chunks) data events, \(bytes) body bytes")
    }

    static func describe(_ event: TaskEvent, chunkNumber: inout Int, totalBytes: inout Int) -> String {
        switch event {
        case .redirect(let decision):
            let target = decision.proposedRequest.url?.absoluteString ?? "?"
            return "redirect: \(decision.response.statusCode) to \(target) (following)"
        case .challenge(let decision):
            let space = decision.protectionSpace
            return "challenge: \(space.authenticationMethod) realm \(space.realm ?? "-") (default handling)"
        case .needBodyStream:
            return "needBodyStream: no stream provided by fetch"
        case .uploadProgress(let progress):
            let expected = progress.totalBytesExpected >= 0 ? "\(progress.totalBytesExpected)" : "?"
            return "uploadProgress: +\(progress.bytes) bytes, \(progress.totalBytes) of \(expected)"
        case .resumed(let offset, let expected):
            return "resumed: at \(offset) of \(expected) bytes"
        case .downloadProgress(let progress):
            return "downloadProgress: \(progress.totalBytes) of \(progress.totalBytesExpected)"
        case .downloaded(let url):
            return "downloaded: \(url.path)"
        case .informationalResponse(let response):
            return "informational: \(response.statusCode)"
        case .waitingForConnectivity:
            return "waitingForConnectivity: retrying until the resource timeout"
        case .retrying(let attempt):
            let why: String
            switch attempt.reason {
            case .failure(let error): why = error.localizedDescription
            case .status(let response): why = "status \(response.statusCode)"
            }
            return "retrying: attempt \(attempt.attempt) in \(String(format: "%.2f", attempt.delay)) s (\(why))"
        case .response(let response, _):
            let length = response.expectedContentLength >= 0 ? "\(response.expectedContentLength) bytes" : "length unknown"
            return "response: \(response.statusCode), \(length)"
        case .data(let chunk):
            chunkNumber += 1
            totalBytes += chunk.count
            return "data: \(chunk.count) bytes (total \(totalBytes))"
        case .trailers(let trailers):
            return "trailers: " + trailers.map { "\($0.name): \($0.value)" }.joined(separator: ", ")
        case .willCacheResponse(let decision):
            return "willCacheResponse: \(decision.proposedResponse.data.count) body bytes (storing)"
        case .metrics(let metrics):
            guard let last = metrics.transactionMetrics.last else { return "metrics: none" }
            if last.fetchType == .localCache {
                return String(format: "metrics: from the cache, %.1f ms total", metrics.taskInterval.duration * 1000)
            }
            let total = metrics.taskInterval.duration * 1000
            return String(
                format: "metrics: %@, %@connection, %.1f ms total, %lld body bytes",
                last.networkProtocolName ?? "?", last.isReusedConnection ? "reused " : "new ",
                total, last.countOfResponseBodyBytesReceived)
        }
    }
}
