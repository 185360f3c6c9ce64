/// Decides when a download reports progress: after at least `byteStep` more
/// bytes or `interval` nanoseconds, whichever comes first, plus the last one,
/// so a fast transfer does not flood the consumer.
struct ProgressThrottle {
    var byteStep: Int64 = 64 * 1024
    var interval: UInt64 = 50_000_000
    private(set) var reportedTotal: Int64 = 0
    private var reportedAt: UInt64 = 0

    init(startingAt total: Int64 = 0) {
        reportedTotal = total
    }

    /// Whether `total` should be reported now (`now` in monotonic nanoseconds).
    mutating func shouldReport(total: Int64, now: UInt64) -> Bool {
        guard total > reportedTotal else { return false }
        if total - reportedTotal >= byteStep || now &- reportedAt >= interval {
            reportedTotal = total
            reportedAt = now
            return true
        }
        return false
    }

    /// The last report: only if something was not reported yet.
    mutating func shouldReportFinal(total: Int64) -> Bool {
        guard total != reportedTotal else { return false }
        reportedTotal = total
        return true
    }
}
