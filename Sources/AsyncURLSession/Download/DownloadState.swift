import Foundation

/// A download's file and what it knows about the body it holds, with the
/// decisions that are the download's own as explicit transitions (where a
/// response continues the file, what resume data may say). Kept in the
/// task's `Guarded` (nil for other tasks) and driven by `TaskCore`; the file's
/// writes are `DownloadFile`'s.
struct DownloadState {
    var file: DownloadFile?
    /// The finished file, handed to the consumer.
    var finishedURL: URL?
    var throttle = ProgressThrottle()
    /// Range start asked for (a download from resume data), else 0.
    var requestedOffset: Int64 = 0
    var entityTag: String?
    var lastModified: String?

    var hasValidator: Bool { entityTag != nil || lastModified != nil }

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
