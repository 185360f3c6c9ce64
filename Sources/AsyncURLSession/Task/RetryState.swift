/// A task's retry policy and the retries made under it: the task's part of
/// `RetryPolicy`, owned by its guarded state. Redirects and authentication
/// hops are not retries and do not count.
struct RetryState {
    var policy: RetryPolicy
    private(set) var retriesMade = 0

    init(_ policy: RetryPolicy) {
        self.policy = policy
    }

    /// Attempts sent so far, the current one included.
    var attemptsMade: Int { retriesMade + 1 }

    /// Whether a response of `status` is held for a retry decision: only
    /// while attempts are left (the last attempt's response is the result).
    func holds(_ status: Int) -> Bool {
        attemptsMade < policy.maximumAttempts && policy.retryableStatusCodes.contains(status)
    }

    /// The statuses `holds` holds, for `HopState.receivedHead`.
    var heldStatuses: Set<Int> {
        attemptsMade < policy.maximumAttempts ? policy.retryableStatusCodes : []
    }

    /// A retry was decided (the budget allowed it).
    mutating func retrying() {
        retriesMade += 1
    }
}
