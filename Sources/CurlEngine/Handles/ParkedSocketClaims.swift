/// Which session of one engine thread parked each socket number.
///
/// Why: a session parks a keep-alive socket when libcurl stops watching it
/// (`MultiSession.watch`), and when libcurl later closes that socket it says
/// nothing (no REMOVE for a socket it no longer watches), so the number
/// stayed in the session's parked set. The kernel hands the number to the
/// next socket, maybe another session's or a raw stream's; a stale event of
/// the old socket (taken by `epoll_wait` before a turn, an inline one
/// included, closed and reopened the number) then made the first session
/// delete the new socket's epoll entry, and its transfer or stream heard
/// nothing more: reads stalled until their time-outs (about one full test
/// run in four). A number registered anew now clears any other session's
/// claim on it first. Engine thread only.
final class ParkedSocketClaims {
    private struct Owner {
        unowned let session: MultiSession
    }

    @exclusivity(unchecked) private var owners: [Int32: Owner] = [:]
    /// Connection sockets libcurl opened through `SocketHooks` and has not
    /// closed through them: a number here is the very socket that was
    /// parked under it, not a reuse of the number (see `MultiSession.watch`).
    @exclusivity(unchecked) private var live: Set<Int32> = []

    /// libcurl opened a connection socket under `socket`: whatever was
    /// parked under the number before is gone (its socket was closed).
    func opened(_ socket: Int32) {
        live.insert(socket)
        if let owner = owners.removeValue(forKey: socket) { owner.session.forgetParked(socket) }
    }

    /// libcurl is about to close the connection socket `socket`: it is no
    /// longer parked anywhere (the close takes it out of epoll).
    func closing(_ socket: Int32) {
        live.remove(socket)
        if let owner = owners.removeValue(forKey: socket) { owner.session.forgetParked(socket) }
    }

    /// Whether `socket` is a connection socket libcurl opened and has not closed.
    func isLive(_ socket: Int32) -> Bool {
        live.contains(socket)
    }

    /// `session` parked `socket` (libcurl stopped watching it, it stays in epoll).
    func park(_ socket: Int32, by session: MultiSession) {
        owners[socket] = Owner(session: session)
    }

    /// `session` watches its parked `socket` again, or let it go.
    func unpark(_ socket: Int32, by session: MultiSession) {
        if let owner = owners[socket], owner.session === session { owners[socket] = nil }
    }

    /// `socket` is a new socket of `session`: a claim of another session on
    /// the number is stale (that socket is closed), and is dropped there.
    func claimAnew(_ socket: Int32, by session: MultiSession) {
        guard let owner = owners.removeValue(forKey: socket), owner.session !== session else { return }
        owner.session.forgetParked(socket)
    }
}
