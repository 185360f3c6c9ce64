internal import CCurl

/// A change in one session's connection pool (issue 47's pool metrics), as
/// differences: a session's pool is one multi handle on each engine thread
/// it uses, each thread reports the changes of its own, and their sum is
/// the session's.
package struct ConnectionPoolChange: Sendable, Equatable {
    /// Connection sockets libcurl opened and has not closed (connecting ones too).
    package var open = 0
    /// Open connections a transfer or a stream is using: libcurl watches
    /// their socket for a transfer (connecting, sending, receiving; or
    /// paused by the consumer), or a stream task owns it.
    package var inUse = 0
    /// Open connections nobody is using: kept in the pool for a later
    /// request (`open - inUse`).
    package var idle = 0
    /// Transfers added to the pool that have no connection yet: queued
    /// behind the per-host limit, or while theirs is resolved, connected
    /// and secured (they leave this count when libcurl's pre-request
    /// callback says they have one, or when they end).
    package var waitingForConnection = 0
    /// How long each connection closed since the last change had been open
    /// (issue 58's `http.client.connection.duration`), from its socket's
    /// opening (before its connect) to its close.
    package var closedConnectionDurations: [Duration] = []

    package var isZero: Bool { self == ConnectionPoolChange() }
}

/// Hears a session's connection-pool changes. Called on an engine thread
/// (or a caller's inline turn), once per turn that changed something,
/// before that turn's completions are told, and outside any libcurl call.
/// Must not block.
package protocol ConnectionPoolObserver: AnyObject, Sendable {
    func connectionPoolChanged(_ change: ConnectionPoolChange)
}

/// One multi handle's share of its session's pool metrics. Made only for a
/// session with an observer (`EngineSessionOptions.poolObserver`); without
/// one, nothing below runs: the sockets get the plain `SocketHooks`, no
/// pre-request callback is set, and the socket callback pays one nil check.
///
/// What libcurl 7.88.1 lets us see (LIBCURL-NOTES §2, §11): the sockets it
/// opens and closes (CURLOPT_OPENSOCKETFUNCTION / CLOSESOCKETFUNCTION, with
/// the data of the handle that opened the connection, so per session); which
/// of them it watches for a transfer (the multi socket callback, REMOVE when
/// the connection goes back to the pool); and when a transfer has its
/// connection, new or reused (CURLOPT_PREREQFUNCTION). It has no callback for
/// a transfer queued behind CURLMOPT_MAX_HOST_CONNECTIONS (its PENDING state
/// is internal), no connection identifier (CURLINFO_CONN_ID is 8.2) and no
/// queue time (CURLINFO_QUEUE_TIME_T is 8.6), so "waiting" also counts the
/// time a new connection takes to open.
///
/// Engine thread only, as `MultiSession` (its `var`s skip run-time
/// exclusivity checks: see `EngineLoop`).
final class ConnectionPoolTally {
    let observer: any ConnectionPoolObserver
    /// The engine thread's parked-socket record: the counting socket hooks
    /// keep it up to date as the plain ones do.
    let claims: ParkedSocketClaims
    private let pending: PendingPoolChanges
    /// Connection sockets opened through this session's handles and not
    /// closed, with when each was opened.
    @exclusivity(unchecked) private var open: [Int32: ContinuousClock.Instant] = [:]
    /// How long the sockets closed since the observer was last told had been open.
    @exclusivity(unchecked) private var closedDurations: [Duration] = []
    /// The open ones in use (see `ConnectionPoolChange.inUse`).
    @exclusivity(unchecked) private var inUse: Set<Int32> = []
    @exclusivity(unchecked) private var waiting = 0
    /// Each running transfer's id by its easy handle, to tell a socket let
    /// go of because its transfer paused from one whose transfer ended.
    @exclusivity(unchecked) private var transfersByHandle: [UnsafeMutableRawPointer: TransferID] = [:]
    /// What the observer was last told, as totals.
    @exclusivity(unchecked) private var told = ConnectionPoolChange()
    @exclusivity(unchecked) private var queued = false

    init(observer: any ConnectionPoolObserver, claims: ParkedSocketClaims, pending: PendingPoolChanges) {
        self.observer = observer
        self.claims = claims
        self.pending = pending
    }

    // MARK: Sockets (from the counting `SocketHooks` and `MultiSession.watch`)

    func opened(_ socket: Int32) {
        claims.opened(socket)
        open[socket] = .now
        changed()
    }

    func closing(_ socket: Int32) {
        claims.closing(socket)
        if let opened = open.removeValue(forKey: socket) { closedDurations.append(opened.duration(to: .now)) }
        inUse.remove(socket)
        changed()
    }

    /// libcurl watches `socket` for a transfer.
    func watching(_ socket: Int32) {
        guard open[socket] != nil, inUse.insert(socket).inserted else { return }
        changed()
    }

    /// libcurl stopped watching `socket` (REMOVE) in a call about `easy`'s
    /// transfer. A paused transfer keeps it: on HTTP/1.1 a pause is a REMOVE.
    func letGo(_ socket: Int32, easy: UnsafeMutableRawPointer?, in transfers: [TransferID: Transfer]) {
        if let easy, let id = transfersByHandle[easy], let transfer = transfers[id], transfer.isPaused { return }
        guard inUse.remove(socket) != nil else { return }
        changed()
    }

    /// A connect-only transfer's socket became a stream task's: in use
    /// until the stream closes it.
    func streamOpened(_ socket: Int32) {
        guard open[socket] != nil, inUse.insert(socket).inserted else { return }
        changed()
    }

    // MARK: Transfers

    /// `transfer` was added to the multi handle: it waits for a connection
    /// until libcurl's pre-request callback runs.
    func added(_ transfer: Transfer) {
        transfer.poolTally = self
        transfer.awaitsConnection = true
        transfersByHandle[transfer.easy.raw] = transfer.id
        let data = Unmanaged.passUnretained(transfer).toOpaque()
        _ = ccurl_easy_setopt_prereq_function(transfer.easy.raw, preRequest)
        _ = transfer.easy.set(CURLOPT_PREREQDATA, pointer: data)
        waiting += 1
        changed()
    }

    /// The transfer has its connection (or ended without one).
    func connected(_ transfer: Transfer) {
        guard transfer.awaitsConnection else { return }
        transfer.awaitsConnection = false
        waiting -= 1
        changed()
    }

    /// The transfer left the multi handle (or became a stream's).
    func ended(_ transfer: Transfer) {
        connected(transfer)
        transfersByHandle[transfer.easy.raw] = nil
    }

    // MARK: Telling

    private func changed() {
        guard !queued else { return }
        queued = true
        pending.tallies.append(self)
    }

    /// Tells the observer what changed since it was last told, if anything.
    func tell() {
        queued = false
        let now = ConnectionPoolChange(
            open: open.count, inUse: inUse.count, idle: open.count - inUse.count, waitingForConnection: waiting)
        // Taken, not copied: clearing an array the change still shares
        // would allocate a new buffer at every change.
        var closed: [Duration] = []
        if !closedDurations.isEmpty { swap(&closed, &closedDurations) }
        let change = ConnectionPoolChange(
            open: now.open - told.open, inUse: now.inUse - told.inUse, idle: now.idle - told.idle,
            waitingForConnection: now.waitingForConnection - told.waitingForConnection,
            closedConnectionDurations: closed)
        told = now
        if !change.isZero { observer.connectionPoolChanged(change) }
    }
}

/// One engine thread's tallies with changes not yet told: the loop tells
/// them before it tells a turn's completions (`EngineLoop.flushCompletions`),
/// so a task that completes finds its connection's state already counted.
/// Empty, and one `isEmpty` check per turn, while no session has pool metrics.
final class PendingPoolChanges {
    @exclusivity(unchecked) var tallies: [ConnectionPoolTally] = []

    func tell() {
        // A tally that changes while told (it cannot: observers do not call
        // libcurl) would queue itself again for the next turn.
        let told = tallies
        tallies.removeAll(keepingCapacity: true)
        for tally in told { tally.tell() }
    }
}

// The data is the transfer, alive while it is in its session's table, which
// it is whenever libcurl runs it.
private let preRequest: ccurl_prereq_callback = { data, _, _, _, _ in
    if let data {
        Unmanaged<Transfer>.fromOpaque(data)._withUnsafeGuaranteedRef { transfer in
            transfer.poolTally?.connected(transfer)
        }
    }
    return Int32(CURL_PREREQFUNC_OK)
}
