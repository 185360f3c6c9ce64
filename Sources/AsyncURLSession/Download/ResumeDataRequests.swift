import Foundation

/// `cancelByProducingResumeData()` callers: whether any asked (the partial
/// file is then kept, whatever ended the transfer) and who waits for the
/// answer, which comes once, as the task ends. Any task can be asked; only
/// a download with a validator answers with data.
struct ResumeDataRequests {
    /// Someone asked: the partial file is kept with resume data.
    private(set) var isWanted = false
    private var waiters: [CheckedContinuation<Data?, Never>] = []

    var isEmpty: Bool { waiters.isEmpty }

    /// A caller waits for the resume data (the driver then cancels the task).
    mutating func ask(_ waiter: CheckedContinuation<Data?, Never>) {
        isWanted = true
        waiters.append(waiter)
    }

    /// The waiters to answer now that the task ends; each is answered once.
    mutating func takeWaiters() -> [CheckedContinuation<Data?, Never>] {
        defer { waiters = [] }
        return waiters
    }
}
