internal import CCurl
import Glibc

/// One engine session: a multi handle (the connection pool of one core
/// session), a share handle for TLS session resumption and DNS, the session's
/// transfers and its recycled easy handles. Engine thread only (so its
/// `var`s skip run-time exclusivity checks: see `EngineLoop`).
final class MultiSession {
    let id: EngineSessionID
    /// The high 32 bits of this session's epoll tags.
    let tag: UInt32
    let raw: UnsafeMutableRawPointer
    let share: UnsafeMutableRawPointer?
    let epollFD: Int32
    /// The engine thread's record of parked numbers, shared by its sessions.
    let claims: ParkedSocketClaims
    /// The session's pool metrics on this thread; nil (the default) when it
    /// has none, and then nothing counts. Set later by `observePool` for a
    /// session made before a metrics backend was bootstrapped.
    @exclusivity(unchecked) private(set) var poolTally: ConnectionPoolTally?
    private let pendingPoolChanges: PendingPoolChanges
    /// When libcurl wants `socket_action(TIMEOUT)`, in monotonic nanoseconds.
    @exclusivity(unchecked) var timerDeadline: UInt64?
    @exclusivity(unchecked) var transfers: [TransferID: Transfer] = [:]
    /// `epoll_ctl` calls made for libcurl's sockets (tests count them).
    @exclusivity(unchecked) private(set) var epollChanges = 0
    /// Sockets libcurl watches, with the epoll events it asked for.
    @exclusivity(unchecked) private(set) var watchedSockets: [Int32: UInt32] = [:]
    /// While a caller waits inline (`EngineLoop.runInlineWait`), the watched
    /// sockets are in the epoll set with no events, so that the sleeping
    /// engine thread is not woken for them: the waiting thread polls them.
    @exclusivity(unchecked) private(set) var socketsHidden = false
    @exclusivity(unchecked) private var idleHandles: [EasyHandle] = []
    private static let maximumIdleHandles = 256
    static let idleConnectionCacheSize = 1024

    init?(
        id: EngineSessionID, tag: UInt32, epollFD: Int32, claims: ParkedSocketClaims, options: EngineSessionOptions,
        pendingPoolChanges: PendingPoolChanges = PendingPoolChanges()
    ) {
        guard let multi = curl_multi_init() else { return nil }
        self.id = id
        self.tag = tag
        self.raw = multi
        self.epollFD = epollFD
        self.claims = claims
        self.pendingPoolChanges = pendingPoolChanges
        poolTally = options.poolObserver.map {
            ConnectionPoolTally(observer: $0, claims: claims, pending: pendingPoolChanges)
        }
        // A share handle is the only way to resume TLS sessions across the easy
        // handles of one session (LIBCURL-NOTES §1). Everything runs on the
        // engine thread, so it needs no lock callbacks.
        let share = curl_share_init()
        if let share {
            _ = ccurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
            _ = ccurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_DNS.rawValue))
        }
        self.share = share

        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = ccurl_multi_setopt_socket_function(multi, multiSocketCallback)
        _ = ccurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me)
        _ = ccurl_multi_setopt_timer_function(multi, multiTimerCallback)
        _ = ccurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me)
        if options.maximumConnectionsPerHost > 0 {
            _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, options.maximumConnectionsPerHost)
        }
        // libcurl sizes its idle-connection cache at 4 x the handles added *at
        // that moment*. Ours are added per transfer and removed at its end,
        // so between waves the cache shrank and closed connections that the
        // next wave then opened again. A fixed size keeps them.
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, Self.idleConnectionCacheSize)
    }

    /// Counts this session's pool from now on (a session that had no
    /// observer when it was made; one it has is kept). Connections already
    /// open are not counted: their sockets were opened without the tally.
    /// The idle handles go, as their socket hooks do not count.
    func observePool(_ observer: any ConnectionPoolObserver) {
        guard poolTally == nil else { return }
        poolTally = ConnectionPoolTally(observer: observer, claims: claims, pending: pendingPoolChanges)
        idleHandles.removeAll()
    }

    /// Frees the handles. Transfers must have been removed already.
    func close() {
        claims.releaseAll(of: self)
        idleHandles.removeAll()
        curl_multi_cleanup(raw)
        if let share { curl_share_cleanup(share) }
    }

    /// A handle for `request`: preferably an idle one that still holds its
    /// shape's options (see `HandleShape`), else a reset or new one.
    func takeEasyHandle(for request: TransferRequest) -> EasyHandle? {
        if HandleShape.isReusable(request) {
            // Most sessions send one kind of request: the match is near the end.
            var index = idleHandles.count
            let stop = max(0, index - 8)
            while index > stop {
                index -= 1
                if idleHandles[index].holdsShape(of: request) { return idleHandles.remove(at: index) }
            }
        }
        guard let handle = idleHandles.popLast() ?? EasyHandle() else { return nil }
        if handle.holdsAShape { handle.reset() }
        if !handle.socketHooksInstalled {
            if let poolTally {
                SocketHooks.install(on: handle, counting: poolTally)
            } else {
                SocketHooks.install(on: handle, claims: claims)
            }
        }
        return handle
    }

    /// Keeps a handle for a later transfer. `keepingOptions` (a transfer that
    /// ended cleanly) leaves its options for one of the same shape; otherwise
    /// it is reset now.
    func recycle(_ handle: EasyHandle, keepingOptions: Bool) {
        guard idleHandles.count < Self.maximumIdleHandles else { return }
        if !keepingOptions || !handle.holdsAShape { handle.reset() }
        idleHandles.append(handle)
    }

    /// An event on a socket libcurl no longer watches: it was parked while
    /// idle and is idle no more (the server closed it). Leaves the set, so
    /// a level-triggered event cannot repeat; libcurl notices the close when
    /// it next tries the connection. Returns false for a watched socket.
    func parkedSocketBecameReady(_ socket: Int32) -> Bool {
        guard claims.isParked(socket, by: self) else { return false }
        claims.take(socket, for: self)
        epollChanges += 1
        _ = ccurl_epoll_ctl(epollFD, EPOLL_CTL_DEL, socket, 0, 0)
        return true
    }

    /// A connect-only transfer's socket becomes a raw stream's: libcurl no
    /// longer drives it, and the session stops tracking it (parked or
    /// watched), so its epoll entry can carry the stream's tag. The number
    /// may still be parked by another session: libcurl need never have asked
    /// to watch this socket (a connect that completes at once), so `watch`
    /// may not have claimed it; a stale event of the other session's old
    /// socket would then delete the stream's entry (a classic stream test
    /// heard nothing for 10 s, once in about eight full runs).
    func releaseSocket(_ socket: Int32) {
        claims.take(socket, for: self)
        watchedSockets[socket] = nil
    }

    func epollTag(for socket: Int32) -> UInt64 {
        UInt64(tag) << 32 | UInt64(UInt32(bitPattern: socket))
    }

    // MARK: Callback bodies

    func watch(socket: Int32, what: Int32, registered: UnsafeMutableRawPointer?, easy: UnsafeMutableRawPointer? = nil) {
        if what == Int32(CURL_POLL_REMOVE) {
            poolTally?.letGo(socket, easy: easy, in: transfers)
            // Parked, not deleted: libcurl lets go of a keep-alive connection's
            // socket when its transfer ends and asks for it again when the
            // next transfer reuses the connection, a DEL and an ADD per
            // request. An idle socket raises no event, so it stays in the
            // epoll set until then (no change at all when it asks for the
            // events the entry has, else one MOD), or until an event shows it is
            // not idle after all (closed by the server), which deletes it
            // (`parkedSocketBecameReady`). A socket libcurl closes leaves the
            // set by itself.
            // Parked while hidden, it stays in the set with no events: an
            // idle socket needs none, and a reset still shows (EPOLLERR and
            // EPOLLHUP are always reported).
            // The entry keeps the events it had (none while hidden).
            claims.park(socket, by: self, events: socketsHidden ? 0 : watchedSockets[socket] ?? Self.unknownEvents)
            watchedSockets[socket] = nil
            curl_multi_assign(raw, socket, nil)
            return
        }
        var events: UInt32 = 0
        if what & Int32(CURL_POLL_IN) != 0 { events |= EPOLLIN.rawValue }
        if what & Int32(CURL_POLL_OUT) != 0 { events |= EPOLLOUT.rawValue }
        watchedSockets[socket] = events
        poolTally?.watching(socket)
        // Level-triggered on purpose: edge-triggered is an open TODO in libcurl.
        // A parked socket is still in the set (unless it was closed and its
        // number reused: then MOD fails and ADD follows).
        // Taking the number also drops another session's stale claim on it.
        let parkedEvents = claims.take(socket, for: self)
        let wasParked = parkedEvents != nil
        if wasParked {
            // The same socket (libcurl has not closed it: `SocketHooks`)
            // asked for the events its entry already has: nothing to change.
            // This is the common case, a pooled connection's next request.
            if parkedEvents == events, !socketsHidden, claims.isLive(socket) {
                curl_multi_assign(raw, socket, UnsafeMutableRawPointer(bitPattern: 1))
                return
            }
        }
        let operation = registered == nil && !wasParked ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        // Hidden: a socket already in the set keeps its empty mask (the
        // events are applied by `showSockets`); a new one joins with none.
        if !socketsHidden || operation == EPOLL_CTL_ADD {
            addOrModify(socket, events: socketsHidden ? 0 : events, first: operation)
        }
        // Any non-nil marker says "registered"; no allocation per socket.
        curl_multi_assign(raw, socket, UnsafeMutableRawPointer(bitPattern: 1))
    }

    /// Sets the socket's events with `first`, or with the other verb when
    /// that fails.
    private func addOrModify(_ socket: Int32, events: UInt32, first operation: Int32) {
        epollChanges += 1
        if ccurl_epoll_ctl(epollFD, operation, socket, events, epollTag(for: socket)) != 0 {
            // The fd may have been recycled behind our back: try the other verb.
            let retry = operation == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD
            _ = ccurl_epoll_ctl(epollFD, retry, socket, events, epollTag(for: socket))
        }
    }

    /// Takes the watched sockets' events out of the epoll set (see `socketsHidden`).
    func hideSockets() {
        guard !socketsHidden else { return }
        socketsHidden = true
        for socket in watchedSockets.keys { addOrModify(socket, events: 0, first: EPOLL_CTL_MOD) }
    }

    /// Puts the watched sockets' events back into the epoll set. A socket
    /// that became ready meanwhile wakes the engine thread at once (epoll
    /// checks readiness when the events change).
    func showSockets() {
        guard socketsHidden else { return }
        socketsHidden = false
        for (socket, events) in watchedSockets { addOrModify(socket, events: events, first: EPOLL_CTL_MOD) }
    }

    /// A parked entry whose events are not known: it is never skipped.
    private static let unknownEvents = UInt32.max

    fileprivate func setTimer(milliseconds: Int) {
        if milliseconds < 0 {
            timerDeadline = nil
        } else {
            timerDeadline = ccurl_monotonic_nanoseconds() + UInt64(milliseconds) * 1_000_000
        }
    }
}

// Trampolines: userp is the unretained MultiSession, alive until curl_multi_cleanup
// (so no retain around the call: `_withUnsafeGuaranteedRef`).
private let multiSocketCallback: ccurl_socket_callback = { easy, socket, what, userp, socketp in
    Unmanaged<MultiSession>.fromOpaque(userp!)._withUnsafeGuaranteedRef {
        $0.watch(socket: socket, what: what, registered: socketp, easy: easy)
    }
    return 0
}

private let multiTimerCallback: ccurl_timer_callback = { _, milliseconds, userp in
    Unmanaged<MultiSession>.fromOpaque(userp!)._withUnsafeGuaranteedRef { $0.setTimer(milliseconds: milliseconds) }
    return 0
}
