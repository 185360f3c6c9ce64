import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A download's file and what it knows about the body it holds, with the
/// decisions that are the download's own as explicit transitions (where a
/// response continues the file, what resume data may say). Kept in the
/// task's `TaskMachine` (nil for other tasks) and driven by `TaskCore`; the file's
/// writes are `DownloadFile`'s.
struct DownloadState {
    /// The file being written; nil once it is finished or given up.
    private(set) var file: DownloadFile?
    /// The finished file, handed to the consumer.
    private(set) var finishedURL: URL?
    var throttle = ProgressThrottle()
    /// Range start asked for (a download from resume data), else 0.
    private(set) var requestedOffset: Int64 = 0
    private(set) var entityTag: String?
    private(set) var lastModified: String?

    var hasValidator: Bool { entityTag != nil || lastModified != nil }

    /// A download into `file` that asks for the bytes from `requestedOffset`
    /// on (0: all of them), holding the validator it has so far.
    init(file: DownloadFile?, requestedOffset: Int64 = 0, entityTag: String? = nil, lastModified: String? = nil) {
        self.file = file
        self.requestedOffset = requestedOffset
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// A download into `file`: from the start, or continuing the one
    /// `resume` describes (its bytes, asked for as a range, and its validator).
    init(file: DownloadFile, resumingFrom resume: ResumeData?) {
        let payload = resume?.payload
        self.init(
            file: file, requestedOffset: payload?.bytesReceived ?? 0, entityTag: payload?.entityTag,
            lastModified: payload?.lastModified)
    }

    /// A data task that became a download after `response`: its validator
    /// is what resume data will name.
    init(file: DownloadFile, after response: HTTPURLResponse?) {
        let validator = response.map(ResumeData.validator(of:))
        self.init(file: file, entityTag: validator?.entityTag, lastModified: validator?.lastModified)
    }

    /// The body reached `total` bytes of `expected` (-1: unknown): the
    /// progress to report, or nil while the throttle holds it back.
    mutating func progress(at total: Int64, of expected: Int64, now: UInt64) -> TransferProgress? {
        let previous = throttle.reportedTotal
        guard throttle.shouldReport(total: total, now: now) else { return nil }
        return TransferProgress(bytes: total - previous, totalBytes: total, totalBytesExpected: expected)
    }

    /// The body ended at `total`: the last progress, unless it was reported.
    mutating func finalProgress(at total: Int64, of expected: Int64) -> TransferProgress? {
        let previous = throttle.reportedTotal
        guard throttle.shouldReportFinal(total: total) else { return nil }
        return TransferProgress(bytes: total - previous, totalBytes: total, totalBytesExpected: expected)
    }

    /// The file was written whole and closed: it is handed out from `finishedURL`.
    mutating func finished(_ written: DownloadFile) {
        file = nil
        finishedURL = written.url
    }

    /// The file is no longer this download's (kept for resume data, or removed).
    mutating func releaseFile() {
        file = nil
    }

    /// Where the body of a response goes in the file.
    struct Continuation: Equatable {
        /// Bytes of the file the body follows (0: from the start).
        var offset: Int64
        /// The whole file's expected size, -1 when unknown.
        var expectedTotal: Int64
        /// The file's bytes so far are not the start of this body: empty it.
        var restartsFile: Bool
        /// For a download from resume data: the `resumed` event.
        var resumedEvent: TaskEvent? {
            resumed ? .resumed(offset: offset, expectedTotal: expectedTotal) : nil
        }
        /// The download continues one from resume data (it asked for a range).
        var resumed: Bool
    }

    /// The final response of the download arrived. A 206 whose range starts
    /// where the file ends continues it; anything else (the validator
    /// changed, the server ignored the range) brings the whole body again,
    /// from zero. The response's validator, if any, replaces the kept one.
    mutating func responseArrived(
        statusCode: Int, contentRange: ContentRange?, expectedContentLength length: Int64,
        entityTag: String?, lastModified: String?
    ) -> Continuation {
        if entityTag != nil || lastModified != nil {
            self.entityTag = entityTag
            self.lastModified = lastModified
        }
        var continuation = Continuation(offset: 0, expectedTotal: length, restartsFile: false, resumed: false)
        if requestedOffset > 0 {
            continuation.resumed = true
            if statusCode == 206, let range = contentRange, range.start == requestedOffset {
                continuation.offset = requestedOffset
                continuation.expectedTotal = range.total ?? (length >= 0 ? requestedOffset + length : -1)
            } else {
                continuation.restartsFile = true
            }
        }
        throttle = ProgressThrottle(startingAt: continuation.offset)
        return continuation
    }
}
