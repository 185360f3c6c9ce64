internal import CCurl
import Foundation
import Synchronization

/// One engine thread's run loop, shaped like curl's ephiperfifo example:
/// one epoll set holds the eventfd of the shard's command queue and the
/// sockets of every session's multi handle on this shard;
/// `curl_multi_socket_action` runs on readiness.
///
/// Timers: instead of a timerfd per multi, the loop keeps each multi's
/// deadline and passes the earliest one to `epoll_wait` as its timeout. libcurl
/// asks for millisecond timeouts, so this loses nothing and saves a syscall
/// per re-arm. A deadline of "now" (libcurl's 0) is served in the same turn.
/// One timerfd serves inline turns (see `InlineTurn`), which cannot shorten
/// a timeout the sleeping thread already passed to `epoll_wait`.
///
/// Turns: each runs under `ownership`. The engine thread holds it for every
/// turn and lets go of it only while it waits in `epoll_wait`; an inline turn
/// takes it then, on the thread that starts a transfer, and so does an
/// inline wait, on a consumer's thread (`InlineWait`).
///
/// Exclusivity: the stored `var`s of this class and of the other objects of
/// one engine thread (`MultiSession`, `Transfer`, `EasyHandle`,
/// `EngineTurn.State`) are `@exclusivity(unchecked)`. Swift checks every
/// access to a class property at run time unless it can prove it exclusive;
/// those checks were 32 of the 47 `swift_beginAccess` calls per small GET
/// through `data(for:)` (uprobe count, 20,000 GETs at concurrency 64; 47 -> 15,
/// the rest in Foundation), each a thread-local access-set update. They can
/// only find what the confinement above already rules out: these objects are
/// used by one thread at a time, under `ownership`, and every mutation of
/// one of these properties is of a value (an array, a dictionary, a parser)
/// that calls nothing which could reach the same property again. The
/// compile-time checks still apply.
final class EngineLoop {
    private let shard: EngineShard
    private let commands: CommandQueue
    private let turn: EngineTurn.State
    private let epollFD: Int32
    @exclusivity(unchecked) private var sessionsByID: [EngineSessionID: MultiSession] = [:]
    @exclusivity(unchecked) private var sessionsByTag: [UInt32: MultiSession] = [:]
    @exclusivity(unchecked) private var nextTag: UInt32 = 1
    @exclusivity(unchecked) private var commandBatch: [EngineCommand?] = []
    /// Transfers that ended this turn, told at the turn's end (see `flushCompletions`).
    /// Optional so that each is moved out when told, not copied.
    @exclusivity(unchecked) private var completedBatch: [(any TransferDelegate, TransferID, TransferOutcome)?] = []
    /// What `flushCompletions` is telling now; empty between turns, with the capacity of the last batch.
    @exclusivity(unchecked) private var runningCompletions: [(any TransferDelegate, TransferID, TransferOutcome)?] = []
    /// Idle-timeout sweep: cheap enough at 4 Hz for 10,000 transfers.
    private static let sweepInterval: UInt64 = 250_000_000
    @exclusivity(unchecked) private var nextSweep: UInt64 = 0
    private static let commandTag: UInt64 = 0
    /// Raw streams' sockets carry this in the upper half of their epoll tag
    /// (sessions' tags count up from 1).
    private static let streamTagPrefix: UInt64 = 0xFFFF_FFFF << 32
    @exclusivity(unchecked) private var streams: [TransferID: (stream: RawStream, session: MultiSession)] = [:]
    @exclusivity(unchecked) private var streamsBySocket: [Int32: TransferID] = [:]
    /// Which session parked each socket number (see `ParkedSocketClaims`).
    private let parkedClaims = ParkedSocketClaims()
    /// Sessions' pool metrics with changes to tell (see `PendingPoolChanges`).
    private let pendingPoolChanges = PendingPoolChanges()

    private let executor: EngineExecutor
    /// Held by whichever thread runs a turn (see the type's comment).
    private let ownership = Mutex<Void>(())
    private let timerFD: Int32
    private static let timerTag: UInt64 = 1
    /// What the engine thread's current `epoll_wait` waits for at the
    /// latest, counting the timerfd (monotonic ns; `.max`: only readiness).
    @exclusivity(unchecked) private var wakeDeadline: UInt64 = .max
    /// When the timerfd fires, `.max` when it is not armed.
    @exclusivity(unchecked) private var timerArmedFor: UInt64 = .max
    /// No inline wait starts before this (monotonic ns): set when one ran
    /// out of time or a command cut it short (see `InlineWait.pause`).
    @exclusivity(unchecked) private var inlineWaitsPausedUntil: UInt64 = 0
    /// An inline wait's poll set and the epoll tags of its sockets, kept
    /// with their capacity from one wait to the next.
    @exclusivity(unchecked) private var waitPollFDs: [pollfd] = []
    @exclusivity(unchecked) private var waitTags: [UInt64] = []

    init(shard: EngineShard, executor: EngineExecutor) {
        self.shard = shard
        self.commands = shard.commands
        self.turn = EngineTurn.State(shard: shard.index)
        self.executor = executor
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epollFD >= 0, "epoll_create1 failed: errno \(errno)")
        let added = ccurl_epoll_ctl(epollFD, EPOLL_CTL_ADD, commands.eventFD, EPOLLIN.rawValue, Self.commandTag)
        precondition(added == 0, "cannot watch the engine's eventfd: errno \(errno)")
        timerFD = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        precondition(timerFD >= 0, "timerfd_create failed: errno \(errno)")
        let watched = ccurl_epoll_ctl(epollFD, EPOLL_CTL_ADD, timerFD, EPOLLIN.rawValue, Self.timerTag)
        precondition(watched == 0, "cannot watch the engine's timerfd: errno \(errno)")
    }

    func run() -> Never {
        EngineTurn.markEngineThread(turn)
        commands.install(LoopInlineTurn(loop: self))
        let capacity = 256
        var datas = [UInt64](repeating: 0, count: capacity)
        var events = [UInt32](repeating: 0, count: capacity)
        // The first wait's preparation; each later one is made at the end of
        // the turn before it, under the same acquisition of `ownership`
        // (one lock acquisition per turn less; an inline turn could not
        // have run in between anyway, the engine thread being awake).
        var timeout = ownership.withLock { _ in prepareToWait() }
        while true {
            let count = datas.withUnsafeMutableBufferPointer { datas in
                events.withUnsafeMutableBufferPointer { events in
                    ccurl_epoll_wait(epollFD, datas.baseAddress, events.baseAddress, Int32(capacity), timeout)
                }
            }
            timeout = ownership.withLock { _ in
                // Woken from a blocking wait: the commands that woke it are
                // taken under the same acquisition that notes it awake.
                let drained = timeout != 0
                if drained { commands.awoke(draining: &commandBatch) }
                turn.turnStart = ccurl_monotonic_nanoseconds()
                if count > 0 {
                    for index in 0..<Int(count) {
                        handleReadiness(tag: datas[index], events: events[index])
                    }
                }
                runCommands(drained: drained)
                runDueTimers()
                sweepIdleTransfers()
                flushCompletions()
                EngineTurn.flush(turn, runningJobsOn: executor)
                return prepareToWait()
            }
        }
    }

    /// The timeout for the next `epoll_wait`: 0 when commands came in since
    /// the last drain or work is held, else until the earliest deadline.
    private func prepareToWait() -> Int32 {
        let timeout = millisecondsUntilNextDeadline()
        // Commands that came in since the last drain, or held work: do not block.
        guard timeout != 0, !turn.hasWork, commands.prepareToSleep(idle: isIdle) else { return 0 }
        // Only a sleeping thread's deadline matters (to inline turns).
        let epollDeadline = timeout < 0 ? UInt64.max : ccurl_monotonic_nanoseconds() &+ UInt64(timeout) &* 1_000_000
        wakeDeadline = min(epollDeadline, timerArmedFor)
        return timeout
    }

    /// A turn on the calling thread while the engine thread sleeps (see
    /// `InlineTurn`). Returns false when the engine thread must be woken
    /// instead: it is running a turn itself, or this turn left it work.
    func runInlineTurn() -> Bool {
        let ended = ownership.withLockIfAvailable { _ -> Bool in
            EngineTurn.standingIn(for: turn) {
                turn.turnStart = ccurl_monotonic_nanoseconds()
                runCommands()
                runDueTimers()
                sweepIdleTransfers()
                flushCompletions()
                EngineTurn.flush(turn, runningJobsOn: nil)
                // Jobs of the engine's executor run on the engine thread.
                if turn.hasWork { return false }
                armTimerForSleepingThread()
                // Commands that came in meanwhile mean a burst of starts
                // (several consumers woken together): the engine thread
                // serves them, rather than this caller serving them all.
                return commands.endInlineTurn(sole: soleTransfer())
            }
        }
        return ended ?? false
    }

    /// A caller parked on transfer `id` waits for it on its own thread while
    /// the engine thread sleeps and `id` is the only transfer in flight here
    /// (`CommandQueue` offers only one an inline turn started; see
    /// `InlineWait`). Returns when `isDone()` says the caller has what it
    /// waited for, or when the engine thread must take over: commands or its
    /// timer came in, work is held for it, or `limit` ns passed.
    func runInlineWait(for id: TransferID, limit: UInt64, until isDone: () -> Bool) -> InlineWait.End {
        let end = ownership.withLockIfAvailable { _ -> InlineWait.End in
            let start = ccurl_monotonic_nanoseconds()
            guard start >= inlineWaitsPausedUntil, soleTransfer() == id else { return .notStarted }
            return EngineTurn.standingIn(for: turn) {
                for session in sessionsByID.values { session.hideSockets() }
                let end = serveInlineWait(until: start &+ limit, isDone: isDone)
                for session in sessionsByID.values { session.showSockets() }
                if end == .timedOut || end == .commandQueued {
                    inlineWaitsPausedUntil = ccurl_monotonic_nanoseconds() &+ InlineWait.pause
                }
                armTimerForSleepingThread()
                if turn.hasWork {
                    commands.wakeSleepingEngine()
                } else {
                    // The next start from this caller may be an inline turn again.
                    commands.sleepsOn(idle: isIdle)
                }
                return end
            }
        }
        return end ?? .notStarted
    }

    /// No transfer is in flight on this thread.
    private var isIdle: Bool { sessionsByID.values.allSatisfy { $0.transfers.isEmpty } }

    /// The transfer in flight on this thread when it is the only one; nil
    /// when none or several are.
    private func soleTransfer() -> TransferID? {
        var sole: TransferID?
        for session in sessionsByID.values where !session.transfers.isEmpty {
            guard sole == nil, session.transfers.count == 1 else { return nil }
            sole = session.transfers.keys.first
        }
        return sole
    }

    /// The turns of an inline wait, until it ends.
    private func serveInlineWait(until limit: UInt64, isDone: () -> Bool) -> InlineWait.End {
        while true {
            waitPollFDs.removeAll(keepingCapacity: true)
            waitTags.removeAll(keepingCapacity: true)
            // The engine thread's own wake-ups end the wait: it serves them.
            waitPollFDs.append(pollfd(fd: commands.eventFD, events: Int16(POLLIN), revents: 0))
            waitPollFDs.append(pollfd(fd: timerFD, events: Int16(POLLIN), revents: 0))
            for session in sessionsByID.values {
                for (socket, events) in session.watchedSockets {
                    // poll's IN and OUT bits are epoll's.
                    waitPollFDs.append(pollfd(fd: socket, events: Int16(truncatingIfNeeded: events), revents: 0))
                    waitTags.append(session.epollTag(for: socket))
                }
            }
            let now = ccurl_monotonic_nanoseconds()
            if now >= limit { return .timedOut }
            let until = min(limit, earliestDeadline() ?? .max)
            let ready = waitPollFDs.withUnsafeMutableBufferPointer { fds in
                ccurl_poll_nanoseconds(fds.baseAddress, UInt32(fds.count), Int64(until > now ? until - now : 0))
            }
            if ready < 0 && errno != EINTR { return .engineNeeded }
            if waitPollFDs[0].revents != 0 { return .commandQueued }
            if waitPollFDs[1].revents != 0 { return .timerFired }
            turn.turnStart = ccurl_monotonic_nanoseconds()
            if ready > 0 {
                for index in waitTags.indices {
                    let revents = waitPollFDs[index + 2].revents
                    // poll's ERR and HUP bits are epoll's too.
                    if revents != 0 { handleReadiness(tag: waitTags[index], events: UInt32(UInt16(bitPattern: revents))) }
                }
            }
            runDueTimers()
            sweepIdleTransfers()
            flushCompletions()
            EngineTurn.flush(turn, runningJobsOn: nil)
            if isDone() { return .done }
            if turn.hasWork { return .engineNeeded }
        }
    }

    /// After an inline turn: the sleeping thread's `epoll_wait` timeout
    /// was computed before it, so a deadline the turn brought closer (a new
    /// transfer's idle sweep, a libcurl timer) is armed on the timerfd.
    private func armTimerForSleepingThread() {
        guard let deadline = earliestDeadline(), deadline < wakeDeadline else { return }
        let now = ccurl_monotonic_nanoseconds()
        _ = ccurl_timerfd_arm(timerFD, Int64(deadline > now ? deadline - now : 1))
        timerArmedFor = deadline
        wakeDeadline = deadline
    }

    /// Tells the delegates of the transfers that ended this turn, all at once.
    ///
    /// Why batched: a delegate resumes a parked consumer, which wakes a worker
    /// thread. Told one by one while the turn still reads other sockets, a
    /// worker finished each wake-up before the next came and went back to
    /// sleep, a futex wake and wait per request; told together, one wake-up
    /// serves the whole batch. The delay is one turn, and nothing of the
    /// transfer is used after its outcome was taken.
    private func flushCompletions() {
        if !pendingPoolChanges.tallies.isEmpty { pendingPoolChanges.tell() }
        guard !completedBatch.isEmpty else { return }
        turn.finishingTransfers = true
        defer { turn.finishingTransfers = false }
        // Swapped with a spare list (a delegate may end another transfer
        // meanwhile), and each entry moved out: a copy of the list made the
        // next `removeAll(keepingCapacity:)` allocate a new buffer every
        // turn, and iterating copied each outcome (its metrics and error).
        swap(&completedBatch, &runningCompletions)
        for index in runningCompletions.indices {
            if let (delegate, id, outcome) = runningCompletions[index].take() {
                delegate.transferDidComplete(outcome, of: id)
            }
        }
        runningCompletions.removeAll(keepingCapacity: true)
    }

    // MARK: Readiness

    private func handleReadiness(tag: UInt64, events: UInt32) {
        if tag == Self.commandTag {
            return  // commands run once per turn, below
        }
        if tag == Self.timerTag {
            // Only wakes the thread: the turn serves whatever is due.
            var expirations: UInt64 = 0
            _ = withUnsafeMutableBytes(of: &expirations) { read(timerFD, $0.baseAddress, 8) }
            timerArmedFor = .max
            return
        }
        if tag & Self.streamTagPrefix == Self.streamTagPrefix {
            return streamReady(socket: Int32(bitPattern: UInt32(truncatingIfNeeded: tag)), events: events)
        }
        guard let session = sessionsByTag[UInt32(truncatingIfNeeded: tag >> 32)] else { return }
        let socket = Int32(bitPattern: UInt32(truncatingIfNeeded: tag))
        if session.parkedSocketBecameReady(socket) { return }
        var mask: Int32 = 0
        if events & EPOLLIN.rawValue != 0 { mask |= Int32(CURL_CSELECT_IN) }
        if events & EPOLLOUT.rawValue != 0 { mask |= Int32(CURL_CSELECT_OUT) }
        if events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { mask |= Int32(CURL_CSELECT_ERR) }
        var running: Int32 = 0
        _ = curl_multi_socket_action(session.raw, socket, mask, &running)
        EngineTurn.flushReads(turn)
        finishCompletedTransfers(in: session)
    }

    // MARK: Timers

    /// The earliest libcurl timer or idle sweep due, nil when none is.
    private func earliestDeadline() -> UInt64? {
        var earliest: UInt64?
        for session in sessionsByID.values {
            if let deadline = session.timerDeadline, deadline < (earliest ?? .max) { earliest = deadline }
            if !session.transfers.isEmpty, nextSweep < (earliest ?? .max) { earliest = nextSweep }
        }
        return earliest
    }

    private func millisecondsUntilNextDeadline() -> Int32 {
        guard let earliest = earliestDeadline() else { return -1 }
        let now = ccurl_monotonic_nanoseconds()
        if earliest <= now { return 0 }
        let milliseconds = (earliest - now + 999_999) / 1_000_000
        return Int32(min(milliseconds, 60_000))
    }

    private func runDueTimers() {
        // libcurl may ask for "again, now" from inside socket_action; serve that
        // a bounded number of times per turn so commands and sockets still run.
        for _ in 0..<8 {
            let now = ccurl_monotonic_nanoseconds()
            var ranAny = false
            for session in sessionsByID.values {
                guard let deadline = session.timerDeadline, deadline <= now else { continue }
                session.timerDeadline = nil
                var running: Int32 = 0
                _ = curl_multi_socket_action(session.raw, ccurl_socket_timeout, 0, &running)
                finishCompletedTransfers(in: session)
                ranAny = true
            }
            if !ranAny { return }
        }
    }

    private func sweepIdleTransfers() {
        let now = ccurl_monotonic_nanoseconds()
        guard now >= nextSweep else { return }
        nextSweep = now + Self.sweepInterval
        for session in sessionsByID.values {
            var expired: [Transfer] = []
            for transfer in session.transfers.values where !transfer.isPaused {
                let idle = transfer.request.idleTimeout
                guard idle > 0, idle.isFinite else { continue }
                if Double(now &- transfer.lastActivity) / 1e9 > idle { expired.append(transfer) }
            }
            for transfer in expired {
                let seconds = transfer.request.idleTimeout
                let error = URLError.make(
                    .timedOut, url: transfer.request.url,
                    reason: "No data was sent or received for \(seconds) seconds (timeoutIntervalForRequest).")
                abort(transfer, in: session, error: error)
            }
        }
    }

    // MARK: Commands

    /// `drained`: the turn took its commands when it woke.
    private func runCommands(drained: Bool = false) {
        if !drained { commands.drain(into: &commandBatch) }
        // Each command is moved out, not copied: iterating (or reversing to
        // pop from the end) copied every command, retaining its payload.
        for index in commandBatch.indices {
            if let command = commandBatch[index].take() { run(command) }
        }
        commandBatch.removeAll(keepingCapacity: true)
    }

    private func run(_ command: consuming EngineCommand) {
        switch consume command {
        case .openSession(let id, let options):
            openSession(id, options: options)
        case .closeSession(let id):
            closeSession(id)
        case .observePool(let id, let observer):
            sessionsByID[id]?.observePool(observer)
        case .start(let id, let placement, let request, let collectsMetrics, let delegate):
            start(id, in: placement, request: request, collectsMetrics: collectsMetrics, delegate: delegate)
        case .suspend(let id, let sessionID):
            guard let (_, transfer) = lookup(id, sessionID), !transfer.suspended else { return }
            transfer.suspended = true
            transfer.applyPauseState()
        case .resume(let id, let sessionID):
            guard let (session, transfer) = lookup(id, sessionID), transfer.suspended else { return }
            transfer.suspended = false
            transfer.lastActivity = ccurl_monotonic_nanoseconds()
            applyPauseState(of: transfer, in: session)
        case .resumeReceiving(let id, let sessionID):
            guard let (session, transfer) = lookup(id, sessionID), transfer.receivePaused else { return }
            transfer.receivePaused = false
            transfer.lastActivity = ccurl_monotonic_nanoseconds()
            // Synchronous: buffered bytes are delivered inside this call, and
            // the write callback may pause again. libcurl then sets its timer
            // to 0, which the loop serves this turn. A callback that stops
            // the transfer meanwhile ends it here: libcurl would not.
            applyPauseState(of: transfer, in: session)
        case .resumeSending(let id, let sessionID):
            guard let (session, transfer) = lookup(id, sessionID), transfer.sendPaused else { return }
            transfer.sendPaused = false
            transfer.lastActivity = ccurl_monotonic_nanoseconds()
            applyPauseState(of: transfer, in: session)
        case .cancel(let id, let sessionID, let error):
            guard let (session, transfer) = lookup(id, sessionID) else { return }
            abort(transfer, in: session, error: error)
        case .runJob(let job):
            executor.run(job)
        case .streamSend(let id, let data):
            guard let (stream, _) = streams[id] else { return }
            stream.enqueue(data)
            if let error = stream.writeAvailable() { return closeStream(id, error: error) }
            updateStreamEvents(stream)
        case .streamResumeReading(let id):
            guard let (stream, _) = streams[id], stream.readPaused else { return }
            stream.resumeReading()
            if let end = stream.readAvailable() { return closeStream(id, error: end) }
            updateStreamEvents(stream)
        case .streamClose(let id):
            closeStream(id, error: nil)
        case .streamCloseWrite(let id):
            guard let (stream, _) = streams[id] else { return }
            stream.closeWriteWhenSent()
            if let error = stream.writeAvailable() { return closeStream(id, error: error) }
            updateStreamEvents(stream)
        }
    }

    // MARK: Raw streams

    /// A connect-only transfer connected: its connection becomes a stream.
    private func openStream(_ transfer: Transfer, in session: MultiSession) -> Bool {
        guard let delegate = transfer.delegate as? any RawStreamDelegate,
            let socket = transfer.easy.activeSocket()
        else { return false }
        let stream = RawStream(
            id: transfer.id, easy: transfer.easy, socket: socket, delegate: delegate, url: transfer.request.url)
        session.releaseSocket(socket)
        let tag = Self.streamTagPrefix | UInt64(UInt32(bitPattern: socket))
        if ccurl_epoll_ctl(epollFD, EPOLL_CTL_MOD, socket, stream.events, tag) != 0 {
            guard ccurl_epoll_ctl(epollFD, EPOLL_CTL_ADD, socket, stream.events, tag) == 0 else { return false }
        }
        streams[transfer.id] = (stream, session)
        streamsBySocket[socket] = transfer.id
        session.poolTally?.streamOpened(socket)
        return true
    }

    private func streamReady(socket: Int32, events: UInt32) {
        // A stream closed earlier in this turn: its socket left the set then,
        // and the number may already be a new connection's (libcurl closed
        // the old one): this stale event must not touch it.
        guard let id = streamsBySocket[socket], let (stream, _) = streams[id] else { return }
        if events & EPOLLOUT.rawValue != 0, let error = stream.writeAvailable() {
            return closeStream(id, error: error)
        }
        if events & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0, let end = stream.readAvailable() {
            return closeStream(id, error: end)
        }
        updateStreamEvents(stream)
    }

    private func updateStreamEvents(_ stream: RawStream) {
        let tag = Self.streamTagPrefix | UInt64(UInt32(bitPattern: stream.socket))
        _ = ccurl_epoll_ctl(epollFD, EPOLL_CTL_MOD, stream.socket, stream.events, tag)
    }

    /// Ends a stream: out of epoll first (its socket number is free for
    /// reuse once libcurl closes it), then the handle leaves the multi,
    /// which closes the connection.
    private func closeStream(_ id: TransferID, error: URLError?) {
        guard let (stream, session) = streams.removeValue(forKey: id) else { return }
        streamsBySocket[stream.socket] = nil
        _ = ccurl_epoll_ctl(epollFD, EPOLL_CTL_DEL, stream.socket, 0, 0)
        _ = curl_multi_remove_handle(session.raw, stream.easy.raw)
        stream.end(error)
    }

    private func lookup(_ id: TransferID, _ sessionID: EngineSessionID) -> (MultiSession, Transfer)? {
        guard let session = sessionsByID[sessionID], let transfer = session.transfers[id] else { return nil }
        return (session, transfer)
    }

    private func openSession(_ id: EngineSessionID, options: EngineSessionOptions) {
        guard sessionsByID[id] == nil else { return }
        let tag = nextTag
        nextTag &+= 1
        guard let session = MultiSession(
            id: id, tag: tag, epollFD: epollFD, claims: parkedClaims, options: options,
            pendingPoolChanges: pendingPoolChanges)
        else { return }
        sessionsByID[id] = session
        sessionsByTag[tag] = session
    }

    private func closeSession(_ id: EngineSessionID) {
        guard let session = sessionsByID[id] else { return }
        for (streamID, entry) in streams where entry.session === session {
            closeStream(streamID, error: URLError.make(
                .cancelled, url: entry.stream.url, reason: "The session was invalidated."))
        }
        for transfer in Array(session.transfers.values) {
            abort(transfer, in: session, error: URLError.make(
                .cancelled, url: transfer.request.url, reason: "The session was invalidated."))
        }
        sessionsByID[id] = nil
        sessionsByTag[session.tag] = nil
        session.close()
    }

    private func start(
        _ id: TransferID, in placement: TransferPlacement, request: TransferRequest, collectsMetrics: Bool,
        delegate: any TransferDelegate
    ) {
        let sessionID = placement.session
        let url = request.url
        let failEarly = { [shard] (code: URLError.Code, reason: String) in
            placement.finished(on: shard.index)
            let error = URLError.make(code, url: url, reason: reason)
            delegate.transferDidComplete(TransferOutcome(error: error, metrics: .empty(fetchStart: Date())), of: id)
        }
        guard let session = sessionsByID[sessionID] else {
            return failEarly(.cancelled, "The session was invalidated before the transfer started.")
        }
        guard let easy = session.takeEasyHandle(for: request) else {
            return failEarly(.cannotLoadFromNetwork, "libcurl could not create a transfer handle (out of memory).")
        }
        let transfer = Transfer(
            id: id, placement: placement, easy: easy, request: request, collectsMetrics: collectsMetrics,
            receiveBufferSize: ReceiveBufferSize.for(transfersAlreadyRunning: session.transfers.count),
            delegate: delegate, turn: turn)
        if let error = transfer.configure(share: session.share) {
            transfer.releaseResources()
            session.recycle(easy, keepingOptions: false)
            placement.finished(on: shard.index)
            delegate.transferDidComplete(TransferOutcome(error: error, metrics: .empty(fetchStart: Date())), of: id)
            return
        }
        session.transfers[id] = transfer
        let added = curl_multi_add_handle(session.raw, easy.raw)
        if added != CURLM_OK {
            session.transfers[id] = nil
            transfer.releaseResources()
            let reason = String(cString: curl_multi_strerror(added))
            failEarly(.cannotLoadFromNetwork, "libcurl could not start the transfer: \(reason)")
            return
        }
        session.poolTally?.added(transfer)
    }

    // MARK: Completion

    private func finishCompletedTransfers(in session: MultiSession) {
        var easy: UnsafeMutableRawPointer?
        var code = CURLE_OK
        while ccurl_multi_next_done(session.raw, &easy, &code) == 1 {
            var privateData: UnsafeMutableRawPointer?
            guard let easy, ccurl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &privateData) == CURLE_OK,
                let privateData
            else { continue }
            let transfer = Unmanaged<Transfer>.fromOpaque(privateData).takeUnretainedValue()
            let outcome = transfer.outcome(code: code)
            finish(transfer, in: session, outcome: outcome)
        }
    }

    /// Stops a transfer that libcurl has not finished: cancel, idle timeout,
    /// session closed.
    private func abort(_ transfer: Transfer, in session: MultiSession, error: URLError) {
        stop(transfer, in: session, code: CURLE_ABORTED_BY_CALLBACK, error: error)
    }

    /// Applies the transfer's pause flags after one was lifted. A callback
    /// may stop the transfer inside the unpause (see
    /// `Transfer.applyPauseState`), and libcurl then never reports it done:
    /// it ends here, with the outcome libcurl's code gives it (the task's
    /// error, or success for a response that ended while its request body
    /// still streamed). Before, such a transfer waited for the idle sweep:
    /// a streamed upload whose delegate allowed the response late hung for
    /// its whole request timeout.
    private func applyPauseState(of transfer: Transfer, in session: MultiSession) {
        guard let code = transfer.applyPauseState() else { return }
        stop(transfer, in: session, code: code, error: nil)
    }

    /// Ends a transfer libcurl will not report done, with `code`'s outcome,
    /// or `error` in its place.
    private func stop(_ transfer: Transfer, in session: MultiSession, code: CURLcode, error: URLError?) {
        transfer.discarding = true
        if transfer.isPaused {
            // Unpausing with `discarding` set drains the paused buffer into the
            // void before removal (workaround for curl #10971).
            transfer.suspended = false
            transfer.receivePaused = false
            transfer.sendPaused = false
            transfer.applyPauseState()
        }
        guard session.transfers[transfer.id] != nil else { return }  // finished meanwhile
        var outcome = transfer.outcome(code: code)
        if let error { outcome.error = error }
        finish(transfer, in: session, outcome: outcome)
    }

    private func finish(_ transfer: Transfer, in session: MultiSession, outcome: consuming TransferOutcome) {
        session.poolTally?.ended(transfer)
        if transfer.request.connectOnly, outcome.error == nil, !transfer.discarding {
            // Connected: the handle stays in the multi as a raw stream's.
            session.transfers[transfer.id] = nil
            transfer.placement.finished(on: shard.index)
            transfer.releaseResources()
            if openStream(transfer, in: session) {
                completedBatch.append((transfer.delegate, transfer.id, outcome))
                return
            }
            outcome.error = URLError.make(
                .cannotConnectToHost, url: transfer.request.url,
                reason: "libcurl connected but gave no socket for the stream.")
            _ = curl_multi_remove_handle(session.raw, transfer.easy.raw)
            completedBatch.append((transfer.delegate, transfer.id, outcome))
            return
        }
        _ = curl_multi_remove_handle(session.raw, transfer.easy.raw)
        session.transfers[transfer.id] = nil
        transfer.placement.finished(on: shard.index)
        transfer.releaseResources()
        if !transfer.everPaused && !transfer.discarding {
            session.recycle(transfer.easy, keepingOptions: outcome.error == nil && !transfer.changedOptionsMidTransfer)
        }
        completedBatch.append((transfer.delegate, transfer.id, outcome))
    }
}
