import AsyncURLSession
import AgentWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs a journal's transfers to their end, so that none is lost when the
/// agent dies: the body goes to a partial file, flushed, then recorded with
/// its validator; a run of a download that already holds bytes resumes with
/// `Range` and `If-Range`, and keeps them only if the server answers 206
/// from that offset (a changed resource answers 200: the file starts
/// again). An upload sends its body file again from the start on each
/// attempt; its response body goes to the file as a download's does.
/// Network failures are retried with backoff until the resource timeout,
/// as background sessions do. Redirects are followed (the session's
/// default).
package struct DownloadRunner: Sendable {
    /// What a run reports as it goes (the agent forwards it to the program).
    package enum Event: Sendable, Equatable {
        /// The body continues at `offset` (0: the server sent it whole again).
        case resumed(offset: Int64)
        /// Bytes received so far (on disk or about to be: what a progress
        /// bar shows), after `recordEvery` bytes and at most ten times a
        /// second, however seldom they are made durable and recorded.
        case progress(received: Int64, expectedBytes: Int64)
        /// An upload's request body bytes sent so far, at the pace of
        /// `progress` (after `recordEvery` bytes, at most ten times a
        /// second), and once more when the response comes (all of it sent).
        case sent(bytes: Int64, expectedBytes: Int64)
        /// The attempt failed with a network error; another follows after `pause` seconds.
        case retrying(URLError.Code, pause: Double)
    }

    package let journal: AgentJournal
    /// Where partial and finished files live (the agent's own, 0700).
    package let folder: URL
    package let session: Session
    package var retryPolicy: RetrySchedule.Policy
    /// How often progress is flushed and recorded: every this many bytes,
    /// or an eighth of what is on disk when that is more. Each record costs
    /// an fdatasync and a journal commit; at a mebibyte each, a 1 GiB
    /// download made a thousand and ran at 250 MB/s against 600 in the
    /// foreground. Growing steps make about 80 per GiB, and a kill loses at
    /// most an eighth of the bytes on disk (fetched again with Range).
    package var recordEvery: Int64 = 1 << 20

    package init(journal: AgentJournal, folder: URL, session: Session, retryPolicy: RetrySchedule.Policy = .background()) {
        self.journal = journal
        self.folder = folder
        self.session = session
        self.retryPolicy = retryPolicy
    }

    /// Runs download `id` until it finishes or fails, and returns its entry.
    /// Cancelling the calling task stops it as a kill would: the journal
    /// keeps it running, with its flushed bytes, for the next run.
    package func run(_ id: Int64, events: @escaping @Sendable (Event) -> Void = { _ in }) async throws(JournalError) -> JournalEntry {
        guard var entry = try await journal.entry(id: id) else { throw JournalError("no transfer \(id) in the journal") }
        guard entry.phase.isLive else { return entry }
        try await journal.move(id, to: .running)
        var schedule = RetrySchedule(retryPolicy)
        while true {
            let outcome = await attempt(entry, events: events)
            if Task.isCancelled { return try await journal.entry(id: id) ?? entry }
            switch outcome {
            case .success(let file):
                try await journal.move(id, to: .finished, resultFile: file.path)
            case .failure(.file(let reason)):
                try await journal.move(id, to: .failed, failure: reason, failureCode: URLError.Code.cannotWriteToFile.rawValue)
            case .failure(.network(let error)):
                guard case .retry(let pause) = schedule.next(after: error, elapsed: Date().timeIntervalSince(entry.created))
                else {
                    try await journal.move(id, to: .failed, failure: error.localizedDescription, failureCode: error.code.rawValue)
                    break
                }
                try await journal.move(id, to: .waitingToRetry, failure: error.localizedDescription)
                events(.retrying(error.code, pause: pause))
                try? await Task.sleep(nanoseconds: UInt64(pause * 1e9))
                if Task.isCancelled { return try await journal.entry(id: id) ?? entry }
                try await journal.move(id, to: .running)
                entry = try await journal.entry(id: id) ?? entry
                continue
            }
            return try await journal.entry(id: id) ?? entry
        }
    }

    /// One request: from the recorded offset when the entry can resume.
    private func attempt(_ entry: JournalEntry, events: @Sendable (Event) -> Void) async -> Result<URL, DownloadError> {
        let partialURL = folder.appendingPathComponent("\(entry.id).partial")
        // A resume needs a validator: without one the bytes on disk may
        // belong to another version of the resource.
        let resumable = entry.kind == .download && entry.bytesOnDisk > 0 && entry.partialFile == partialURL.path
            && !entry.validator.isEmpty
        let file: PartialFile
        do { file = try PartialFile(partialURL, keeping: resumable ? entry.bytesOnDisk : 0) } catch {
            return .failure(error)
        }
        guard var request = Self.urlRequest(entry.request) else {
            return .failure(.file("\(entry.request.url) is not a URL the agent can load"))
        }
        let offset = file.length
        if offset > 0 {
            request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            request.setValue(entry.validator.entityTag ?? entry.validator.lastModified, forHTTPHeaderField: "If-Range")
        }
        var validator = entry.validator
        var expected: Int64 = -1
        let task: SessionTask
        if entry.kind == .upload, let body = entry.request.bodyFile {
            task = session.uploadTask(with: request, fromFile: URL(fileURLWithPath: body))
        } else {
            task = session.dataTask(with: request)
        }
        do {
            try await withTaskCancellationHandler {
                task.resume()
                var unrecorded: Int64 = 0
                var unreported: Int64 = 0
                // Each report is a message to the program: every mebibyte
                // of a fast download was a thousand per GiB, and put the
                // agent's CPU up by half. The first mebibyte is reported at
                // once (a transfer that stalls early still shows it).
                var reportedAt = -Double.infinity
                // The same pace for an upload's bytes sent.
                var sent = TransferProgress(bytes: 0, totalBytes: 0, totalBytesExpected: -1)
                var sentReported: Int64 = 0
                var sentReportedAt = -Double.infinity
                for try await event in task.events {
                    switch event {
                    case .uploadProgress(let step):
                        sent = step
                        let now = ProcessInfo.processInfo.systemUptime
                        if step.totalBytes - sentReported >= recordEvery, now - sentReportedAt >= 0.1 {
                            sentReported = step.totalBytes
                            sentReportedAt = now
                            events(.sent(bytes: step.totalBytes, expectedBytes: step.totalBytesExpected))
                        }
                    case .response(let response, _):
                        if sent.totalBytes > sentReported {
                            sentReported = sent.totalBytes
                            events(.sent(bytes: sent.totalBytes, expectedBytes: sent.totalBytesExpected))
                        }
                        let continues = offset > 0 && response.statusCode == 206
                            && Self.contentRangeStart(response) == offset
                        if !continues {
                            try file.truncate(to: 0)
                            try await journal.recordHead(entry.id, Self.head(of: response))
                        }
                        if offset > 0, response.statusCode == 416 {
                            // The server cannot serve the range: start again from nothing.
                            try await record(entry.id, file, -1, JournalValidator())
                            throw URLError(.badServerResponse)
                        }
                        events(.resumed(offset: file.length))
                        validator = Self.validator(of: response)
                        let length = response.expectedContentLength
                        expected = length >= 0 ? file.length + length : -1
                        try await record(entry.id, file, expected, validator)
                    case .data(let data):
                        try file.append(data)
                        unrecorded += Int64(data.count)
                        unreported += Int64(data.count)
                        if unrecorded >= max(recordEvery, file.flushed / 8) {
                            unrecorded = 0
                            try file.flush()
                            try await record(entry.id, file, expected, validator)
                        }
                        if unreported >= recordEvery, ProcessInfo.processInfo.systemUptime - reportedAt >= 0.1 {
                            unreported = 0
                            reportedAt = ProcessInfo.processInfo.systemUptime
                            events(.progress(received: file.length, expectedBytes: expected))
                        }
                    default:
                        break
                    }
                }
            } onCancel: {
                task.cancel()
            }
            try file.flush()
            try await record(entry.id, file, file.length, validator)
            events(.progress(received: file.flushed, expectedBytes: file.length))
            let finished = folder.appendingPathComponent("\(entry.id).download")
            guard rename(partialURL.path, finished.path) == 0 else {
                return .failure(.file("cannot move the download to \(finished.path): \(String(cString: strerror(errno)))"))
            }
            return .success(finished)
        } catch let error as DownloadError {
            return .failure(error)
        } catch {
            // What was written is kept for the next attempt, once on disk.
            if (try? file.flush()) != nil { try? await record(entry.id, file, expected, validator) }
            if let error = error as? URLError { return .failure(.network(error)) }
            return .failure(.file("\(error)"))
        }
    }

    private func record(_ id: Int64, _ file: PartialFile, _ expected: Int64, _ validator: JournalValidator) async throws {
        try await journal.recordProgress(
            id, bytesOnDisk: file.flushed, expectedBytes: expected, validator: validator, partialFile: file.url.path)
    }

    static func urlRequest(_ recorded: BackgroundRequest) -> URLRequest? {
        guard let url = URL(string: recorded.url), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        var request = URLRequest(url: url)
        request.httpMethod = recorded.method
        for pair in recorded.headers where pair.count == 2 { request.addValue(pair[1], forHTTPHeaderField: pair[0]) }
        return request
    }

    /// What the program is told the response was. The body on disk is
    /// decoded: its Content-Encoding (and the encoded length) are not said.
    static func head(of response: HTTPURLResponse) -> ResponseHeadRecord {
        let encoded = response.value(forHTTPHeaderField: "Content-Encoding").map { $0.lowercased() != "identity" } ?? false
        var headers: [[String]] = []
        for (key, value) in response.allHeaderFields {
            guard let name = key as? String, let value = value as? String else { continue }
            let lowered = name.lowercased()
            if lowered == "content-encoding" || (encoded && lowered == "content-length") { continue }
            headers.append([name, value])
        }
        headers.sort { $0[0].lowercased() < $1[0].lowercased() }
        return ResponseHeadRecord(statusCode: response.statusCode, headers: headers, url: response.url?.absoluteString ?? "")
    }

    /// A strong ETag (If-Range takes no weak one), else Last-Modified.
    static func validator(of response: HTTPURLResponse) -> JournalValidator {
        let tag = response.value(forHTTPHeaderField: "ETag").flatMap { $0.hasPrefix("W/") ? nil : $0 }
        return JournalValidator(entityTag: tag, lastModified: response.value(forHTTPHeaderField: "Last-Modified"))
    }

    /// The first byte's offset in "Content-Range: bytes a-b/n".
    static func contentRangeStart(_ response: HTTPURLResponse) -> Int64? {
        guard let value = response.value(forHTTPHeaderField: "Content-Range"),
            value.lowercased().hasPrefix("bytes "),
            let dash = value.firstIndex(of: "-")
        else { return nil }
        return Int64(value[value.index(value.startIndex, offsetBy: 6)..<dash].trimmingCharacters(in: .whitespaces))
    }
}
