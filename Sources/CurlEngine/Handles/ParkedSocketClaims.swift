/// The parked sockets of one engine thread's sessions: which session parked
/// each number, with the events its epoll entry kept, and which numbers are
/// libcurl's live connection sockets. The one record of both; sessions keep
/// no parked set of their own.
///
/// Why one record per thread: a session parks a keep-alive socket when
/// libcurl stops watching it (`MultiSession.watch`), and libcurl may later
/// close it without a word (no REMOVE for a socket it no longer watches).
/// The kernel hands the number to the next socket, maybe another session's
/// or a raw stream's; a stale event of the old socket (taken by
/// `epoll_wait` before a turn, an inline one included, closed and reopened
/// the number) then made the first session delete the new socket's epoll
/// entry, and its transfer or stream heard nothing more: reads stalled
/// until their time-outs (about one full test run in four). A number taken
/// anew drops whatever was parked under it.
///
/// Engine thread only (or a caller's inline turn, which owns the loop).
final class ParkedSocketClaims {
    private struct Parked {
        unowned let session: MultiSession
        /// The events the socket's epoll entry kept (`MultiSession.unknownEvents` if not known).
        let events: UInt32
    }

    @exclusivity(unchecked) private var parked: [Int32: Parked] = [:]
    /// Connection sockets libcurl opened through `SocketHooks` and has not
    /// closed through them: a number here is the very socket that was
    /// parked under it, not a reuse of the number (see `MultiSession.watch`).
    @exclusivity(unchecked) private var live: Set<Int32> = []

    /// `session` parked `socket` (libcurl stopped watching it; it stays in
    /// epoll with `events`).
    func park(_ socket: Int32, by session: MultiSession, events: UInt32) {
        parked[socket] = Parked(session: session, events: events)
    }

    /// The number is `session`'s socket, watched or taken for a stream: no
    /// longer parked. Returns the events its entry kept if `session` had
    /// parked it; a claim of another session is stale (that socket was
    /// closed) and is dropped.
    @discardableResult
    func take(_ socket: Int32, for session: MultiSession) -> UInt32? {
        guard let entry = parked.removeValue(forKey: socket) else { return nil }
        return entry.session === session ? entry.events : nil
    }

    /// Whether `session` has `socket` parked.
    func isParked(_ socket: Int32, by session: MultiSession) -> Bool {
        parked[socket]?.session === session
    }

    /// Drops everything `session` parked (it is closing).
    func releaseAll(of session: MultiSession) {
        parked = parked.filter { $0.value.session !== session }
    }

    /// libcurl opened a connection socket under `socket`: whatever was
    /// parked under the number before is gone (its socket was closed).
    func opened(_ socket: Int32) {
        live.insert(socket)
        parked.removeValue(forKey: socket)
    }

    /// libcurl is about to close the connection socket `socket`: it is no
    /// longer parked anywhere (the close takes it out of epoll).
    func closing(_ socket: Int32) {
        live.remove(socket)
        parked.removeValue(forKey: socket)
    }

    /// Whether `socket` is a connection socket libcurl opened and has not closed.
    func isLive(_ socket: Int32) -> Bool {
        live.contains(socket)
    }
}
