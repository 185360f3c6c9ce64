import Glibc

/// Lets a consumer about to park on a transfer wait for that transfer's
/// socket on its own thread, when an inline turn started the transfer on an
/// engine thread that slept with nothing in flight, and that thread still
/// sleeps with only this transfer.
///
/// Why: one request at a time otherwise costs two thread switches per
/// request where raw libcurl costs one: the engine thread wakes for the
/// response, then wakes the parked consumer's worker thread, and both go
/// back to sleep. Waiting inline, the consumer's thread reads the response,
/// runs the turn that ends the transfer and resumes its own continuation
/// before it ever suspends (a continuation resumed inside its closure does
/// not suspend). It is the shape of `curl_easy_perform`, bounded.
///
/// The bound: the waiting thread is one the caller's executor would
/// otherwise park, but it might have had other work; so a wait lasts at most
/// `limit`, after which the engine thread takes the transfer back as usual
/// (nothing is late: the sockets are handed back, and one that became ready
/// meanwhile wakes it at once). A wait that ran out pauses inline waits on
/// that engine thread for `pause`, so a slow server costs a caller's thread
/// at most one `limit` per pause; so does a wait cut short by a command,
/// which says that the caller is not alone: with 64 requests in flight an
/// engine thread that had finished a batch sometimes slept idle, the first
/// start of the next burst ran inline and waited, and the burst's other
/// starts woke the engine thread, which then waited for the loop (481 such
/// waits per 20,000 requests, a fifth more context switches). Never on an
/// engine thread (code on `Session.ioExecutor` already resumes where the
/// response is read) nor on the main thread.
///
/// While a caller waits, the engine thread's epoll set holds the transfer's
/// sockets with no events (`MultiSession.hideSockets`), so it is not woken
/// for them; the waiting thread polls them together with the engine's
/// eventfd and timerfd, and leaves at once when either fires (a command or
/// a deadline for the engine thread).
enum InlineWait {
    /// Why a wait ended (or did not start).
    enum End: Equatable {
        /// The engine thread was awake, or busy with other transfers.
        case notStarted
        /// The caller has what it waited for.
        case done
        /// `limit` passed: the engine thread took the transfer back.
        case timedOut
        /// A command came in for the engine thread.
        case commandQueued
        /// The engine thread's timer fired.
        case timerFired
        /// The wait's turn left work for the engine thread (jobs of its
        /// executor), or poll failed.
        case engineNeeded
    }

    /// How long one inline wait may hold the caller's thread, in ns.
    static let limit: UInt64 = 1_000_000
    /// How long inline waits stay off on an engine thread after one ran
    /// out or was cut short by a command, in ns.
    static let pause: UInt64 = 100_000_000
}
