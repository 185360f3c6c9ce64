/// Where a raw connection is (see `RawConnection`), as a value with explicit
/// transitions: each takes an input and returns what its owner is to do; it
/// holds no continuations and has no side effects. The owner keeps it under
/// its lock, applies a transition, and acts on the answer after letting go.
///
/// Phases: `idle` → `connecting` (libcurl: TCP, proxy tunnel, TLS) →
/// `handshaking` (the protocol's own opening, when it has one: the WebSocket
/// Upgrade) → `open` → `closing` (we asked the peer to close: a WebSocket
/// close frame) → `closed`. A byte stream goes from `connecting` straight to
/// `open` and never through `closing`.
///
/// Generic over the transfer's id so that tests need no engine.
struct RawConnectionMachine<ID: Hashable & Sendable>: Sendable, Equatable {
    enum Phase: Sendable, Equatable {
        case idle
        case connecting
        case handshaking
        case open
        case closing
        case closed
    }

    private(set) var phase = Phase.idle
    /// The connect-only transfer, once started.
    private(set) var transferID: ID?
    /// Received bytes waiting for the consumer past which reading pauses, and
    /// below which it resumes.
    let highWatermark: Int
    let lowWatermark: Int
    /// Reading was paused (the engine was told so by `streamDidReceive`).
    private(set) var readPaused = false
    /// Bytes handed to the engine to send, and of those, written to the socket.
    private(set) var bytesQueued: Int64 = 0
    private(set) var bytesWritten: Int64 = 0

    init(highWatermark: Int, lowWatermark: Int) {
        self.highWatermark = max(1, highWatermark)
        self.lowWatermark = min(max(0, lowWatermark), self.highWatermark)
    }

    var isOpen: Bool { phase == .open }
    var isClosed: Bool { phase == .closed }
    /// Connecting, opening or open: resumed and not ended.
    var isRunning: Bool { phase != .idle && phase != .closed }

    // MARK: - Opening

    /// Whether a connect-only transfer is to be started now: only when idle.
    /// `reconnecting` (a TLS challenge was answered): the stopped transfer
    /// of `connecting` gives way to a new one.
    mutating func shouldConnect(reconnecting: Bool) -> Bool {
        if reconnecting, phase == .connecting { phase = .idle }
        return phase == .idle
    }

    /// The connect-only transfer `id` was started.
    mutating func connecting(_ id: ID) {
        guard phase == .idle else { return }
        transferID = id
        phase = .connecting
    }

    enum OpenAction: Sendable, Equatable {
        /// Open: resume those waiting for it.
        case resumeOpenWaiters
        /// The protocol's handshake goes first.
        case handshake
        /// Ended meanwhile (cancelled while libcurl connected).
        case none
    }

    /// libcurl's connect-only transfer completed: the socket is ours.
    mutating func connected(handshake: Bool) -> OpenAction {
        guard phase == .connecting else { return .none }
        phase = handshake ? .handshaking : .open
        return handshake ? .handshake : .resumeOpenWaiters
    }

    /// The protocol's handshake succeeded: resume those waiting for it.
    mutating func handshakeSucceeded() -> OpenAction {
        guard phase == .handshaking else { return .none }
        phase = .open
        return .resumeOpenWaiters
    }

    enum WaitOutcome: Sendable, Equatable {
        case ready
        /// Not open yet: wait to be resumed (or failed).
        case wait
        /// Closing or closed: throw the failure, or the closed error.
        case closed
    }

    /// What a caller that needs the connection open does.
    var openWait: WaitOutcome {
        switch phase {
        case .open: .ready
        case .closing, .closed: .closed
        case .idle, .connecting, .handshaking: .wait
        }
    }

    // MARK: - Reading

    /// Bytes arrived and `buffered` now wait for the consumer: whether to
    /// keep reading (false: paused until `drained` resumes it).
    mutating func received(buffered: Int) -> Bool {
        guard buffered >= highWatermark else { return true }
        readPaused = true
        return false
    }

    /// The consumer took bytes and `buffered` wait: the transfer to resume
    /// reading, when paused and below the low watermark.
    mutating func drained(buffered: Int) -> ID? {
        guard readPaused, buffered < lowWatermark else { return nil }
        readPaused = false
        return transferID
    }

    /// Reading resumes whatever is buffered (the consumer stopped reading).
    mutating func resumeReading() -> ID? {
        guard readPaused else { return nil }
        readPaused = false
        return transferID
    }

    // MARK: - Writing

    /// `count` bytes to send while open (or, `handshake`, while the
    /// protocol's handshake runs): the transfer and the count of all bytes
    /// queued with them, which `wrote` reaches once they are written. Nil:
    /// nothing is sent.
    mutating func queue(_ count: Int, handshake: Bool = false) -> (id: ID, end: Int64)? {
        guard phase == (handshake ? .handshaking : .open), let transferID else { return nil }
        bytesQueued += Int64(count)
        return (transferID, bytesQueued)
    }

    /// The socket took every byte queued up to `totalBytes`.
    mutating func wrote(totalBytes: Int64) {
        bytesWritten = max(bytesWritten, totalBytes)
    }

    /// Queued and not yet written.
    var backlog: Int64 { bytesQueued - bytesWritten }

    // MARK: - Closing

    enum CloseAction: Sendable, Equatable {
        /// Open: tell the peer (a close frame) on this transfer; the end
        /// comes from the peer.
        case tellPeer(ID)
        /// Not open yet: stop connecting (the transfer, if started) and end.
        case cancelConnect(ID?)
        /// Closing or closed already.
        case none
    }

    /// We close, politely when open.
    mutating func close() -> CloseAction {
        switch phase {
        case .open:
            guard let transferID else { return .none }
            phase = .closing
            return .tellPeer(transferID)
        case .idle, .connecting, .handshaking:
            return .cancelConnect(transferID)
        case .closing, .closed:
            return .none
        }
    }

    enum EndAction: Sendable, Equatable {
        /// It ends now: fail (or end) every waiter, report the end once.
        /// `wasOpen`: the protocol's handshake had completed.
        case ended(wasOpen: Bool)
        /// It had ended already.
        case none
    }

    /// The connection ends: cancelled, failed, or closed by the peer.
    mutating func end() -> EndAction {
        let wasOpen: Bool
        switch phase {
        case .closed: return .none
        case .open, .closing: wasOpen = true
        case .idle, .connecting, .handshaking: wasOpen = false
        }
        phase = .closed
        return .ended(wasOpen: wasOpen)
    }
}
