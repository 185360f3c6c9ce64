/// What a task's finished hops leave for the hops after them and for its
/// metrics: redirects followed, each hop's transaction, and the
/// authentication it tried (failures per protection space, for
/// `previousFailureCount`; methods the consumer rejected, never offered
/// again). A value type inside `TaskMachine`, changed only by these
/// transitions under the task's lock.
struct HopHistory {
    private(set) var redirectCount = 0
    /// Recorded only when someone can read the task's metrics.
    private(set) var transactions: [PendingTransaction] = []
    /// Failed attempts per protection space (URLAuthenticationChallenge's previousFailureCount).
    private var failureCounts: [String: Int] = [:]
    /// Authentication methods the consumer rejected during this task.
    private(set) var rejectedMethods: Set<String> = []

    mutating func followedRedirect() {
        redirectCount += 1
    }

    mutating func record(_ transaction: PendingTransaction) {
        transactions.append(transaction)
    }

    /// A challenge for the protection space `key` came; a credential was
    /// sent for it (`credentialWasSent`) and so failed. Returns the
    /// failures so far, the challenge's `previousFailureCount`.
    mutating func challenged(for key: String, credentialWasSent: Bool) -> Int {
        if credentialWasSent { failureCounts[key, default: 0] += 1 }
        return failureCounts[key, default: 0]
    }

    /// The consumer rejected a protection space: its method is not offered again.
    mutating func rejected(method: String) {
        rejectedMethods.insert(method)
    }
}
