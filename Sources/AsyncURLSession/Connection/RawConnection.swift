internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// Design note: one raw-connection core under the stream and WebSocket tasks.
//
// `RawConnection<Client>` is what a byte stream (`StreamConnection`) and a
// WebSocket (`WebSocketConnection`) have in common: the connect-only
// transfer started through the engine (again after a TLS challenge was
// answered), the phases as a value-type machine (`RawConnectionMachine`),
// waiting until open, the closed error, the engine's `TransferDelegate`
// and `RawStreamDelegate` conformances, write completion, the backpressure
// of what was received and not consumed, the end (every waiter failed, the
// observer told once, the session's table left) and the lifecycle observer.
//
// Why a generic core over a protocol (`RawConnectionClient`) rather than two
// objects, each the other's delegate: every engine callback takes one lock
// under which the core's state and the protocol's change together (a read
// that completes the WebSocket handshake also opens the connection and may
// deliver messages, close it, or pause reading). With two objects that is
// two locks per callback, or a hand-off; with one generic class it is one
// `Mutex` over `RawConnectionGuarded` (the core's part and `Client.State`),
// no cycle of strong references, and no object more per connection. The
// client is a value: its constants (host and port; the request and its
// handshake) and the hooks the core calls. `StreamConnection` and
// `WebSocketConnection` are this class with their client, and what their
// callers use (reads, writes, frames, ping, close) are extensions of it.

/// What a protocol spoken over a raw connection adds to the core: its
/// state, its handshake, what it does with the bytes that arrive, and how
/// it ends. Hooks marked "under the lock" run inside the connection's one
/// lock and must only change state and return what to do; the core does
/// that (`perform`, `finish`) after letting go.
protocol RawConnectionClient: Sendable {
    /// The protocol's own state, guarded with the core's.
    associatedtype State: Sendable
    /// What the lifecycle observer hears.
    associatedtype Event: Sendable
    /// How the connection ends, as the protocol tells it.
    associatedtype Ending: Sendable
    /// What a turn under the lock decided, carried out after it (`perform`).
    associatedtype Effects: Sendable
    /// What the protocol's waiters get at the end (`finish`).
    associatedtype EndEffects: Sendable

    /// For errors.
    var url: String { get }
    /// Why a connection with no closed error of its own fails.
    var closedError: URLError { get }
    /// The URL the connection's TLS challenges are about.
    var challengeURL: URL? { get }
    /// Why there is no connect request.
    var badTargetError: URLError { get }
    /// After a clean end, a later failure (cancel) becomes the error callers
    /// see: a byte stream's reads then throw; a WebSocket keeps its clean close.
    static var errorReplacesCleanEnd: Bool { get }

    /// Under the lock, before connecting: the connect-only transfer's request
    /// (http or https, the peer's host and port); nil when there is none.
    func connectRequest(_ state: inout State) -> URLRequest?
    /// Once libcurl connected: the protocol's opening bytes to send (nil:
    /// none, the connection is open; a failure ends it).
    func openingBytes(context: SessionContext) -> Result<Data, URLError>?
    /// Under the lock: bytes arrived.
    func received(
        _ bytes: UnsafeRawBufferPointer, _ guarded: inout RawConnectionGuarded<Self>, id: TransferID
    ) -> (RawConnectionReceiveVerdict, Effects)
    /// Under the lock: the peer closed the connection (nil) or it failed.
    func streamEnded(_ error: URLError?, _ guarded: inout RawConnectionGuarded<Self>) -> Effects
    /// Under the lock, once, as the connection ends: what the protocol's
    /// waiters get and what the observer hears.
    func ending(_ how: Ending, wasOpen: Bool, _ guarded: inout RawConnectionGuarded<Self>) -> (EndEffects, Event)
    /// The ending of a failure (a connect error, a cancel, a refused handshake).
    static func failed(_ error: URLError) -> Ending
    /// The error an ending leaves for callers (nil: a clean end).
    static func error(of ending: Ending) -> URLError?

    /// Once, outside the lock, as the connection starts connecting (not
    /// again when it reconnects after a TLS challenge): a byte stream starts
    /// its span here. Nothing by default.
    func connecting(_ connection: RawConnection<Self>)

    func perform(_ effects: Effects, on connection: RawConnection<Self>, id: TransferID)
    func finish(_ effects: EndEffects)
    /// The session is invalidated: end it now.
    func closeForInvalidation(_ connection: RawConnection<Self>)
}

extension RawConnectionClient {
    func connecting(_ connection: RawConnection<Self>) {}
}

/// What `RawConnectionClient.received` decided about reading on.
enum RawConnectionReceiveVerdict: Sendable, Equatable {
    /// `count` bytes now wait for the consumer: the core pauses reading at
    /// its high watermark.
    case buffered(Int)
    /// Read on whatever is buffered (the consumer stopped reading).
    case keepReading
    /// Stop reading (it ended, or nothing more is expected).
    case stopReading
}

/// A write waiting for the socket to take bytes up to `end`.
struct RawConnectionWriter: Sendable {
    let serial: Int
    let end: Int64
    let continuation: CheckedContinuation<Void, any Error>
}

/// A raw connection's state under its lock: the core's and the client's.
struct RawConnectionGuarded<Client: RawConnectionClient>: Sendable {
    var machine: RawConnectionMachine<TransferID>
    var state: Client.State
    /// Why the connection ended, for callers that come after.
    var failure: URLError?
    var openWaiters: [CheckedContinuation<Void, any Error>] = []
    /// In the order of their `end`.
    var writers: [RawConnectionWriter] = []
    var nextSerial = 0
    /// Hears the lifecycle: the classic adapter's delegate calls (or a
    /// user's `observeLifecycle`), then the connection's own.
    var observer: (@Sendable (Client.Event) -> Void)?
    /// The connection's own observer (its span), kept when `observe`
    /// replaces the other one.
    var ownObserver: (@Sendable (Client.Event) -> Void)?

    /// A serial number for a waiter (to find it again at its timeout).
    mutating func makeSerial() -> Int {
        nextSerial += 1
        return nextSerial
    }

    /// Ends the connection (if it had not ended): its waiters and its
    /// observer are told after the lock is let go (`RawConnectionEnd.run`).
    mutating func end(_ how: Client.Ending, client: Client) -> RawConnectionEnd<Client> {
        let error = Client.error(of: how)
        guard case .ended(let wasOpen) = machine.end() else {
            if Client.errorReplacesCleanEnd, failure == nil { failure = error }
            return RawConnectionEnd()
        }
        if failure == nil { failure = error }
        let (effects, event) = client.ending(how, wasOpen: wasOpen, &self)
        var end = RawConnectionEnd<Client>()
        end.effects = effects
        end.error = error ?? failure ?? client.closedError
        end.openWaiters = openWaiters
        end.writers = writers
        end.report = observer.map { ($0, event) }
        openWaiters = []
        writers = []
        observer = nil
        return end
    }
}

/// Everyone told when a raw connection ends, after its lock is let go.
struct RawConnectionEnd<Client: RawConnectionClient>: Sendable {
    fileprivate(set) var effects: Client.EndEffects?
    fileprivate(set) var error: URLError?
    fileprivate(set) var openWaiters: [CheckedContinuation<Void, any Error>] = []
    fileprivate(set) var writers: [RawConnectionWriter] = []
    fileprivate(set) var report: (observer: @Sendable (Client.Event) -> Void, event: Client.Event)?

    /// The protocol's waiters, then the core's, then the observer; then the
    /// connection leaves the session's table.
    func run(on connection: RawConnection<Client>) {
        if let effects { connection.client.finish(effects) }
        if let error {
            for writer in writers { writer.continuation.resume(throwing: error) }
            for waiter in openWaiters { waiter.resume(throwing: error) }
        }
        if let (observer, event) = report { observer(event) }
        connection.context.unregisterConnection(connection.identifier)
    }
}

/// A connection libcurl opened (TCP, proxy tunnel, TLS: a connect-only
/// transfer) and the engine then reads and writes for `client`'s protocol.
///
/// Threads: engine callbacks and callers meet under `guarded`, one
/// acquisition per engine callback; waiting callers are resumed after the
/// lock is let go. Backpressure: once `highWatermark` bytes received wait
/// for the consumer, the socket is not read until it took them down below
/// the low watermark (half), so a slow consumer slows the peer.
final class RawConnection<Client: RawConnectionClient>: TransferDelegate, RawStreamDelegate, SessionConnection, Sendable {
    let identifier: Int
    let context: SessionContext
    let client: Client
    let guarded: Mutex<RawConnectionGuarded<Client>>
    /// The TLS challenges of a secure connection with a handler.
    let tlsChallenges = ConnectionTLSChallenges()

    init(identifier: Int, context: SessionContext, client: Client, state: Client.State, highWatermark: Int) {
        self.identifier = identifier
        self.context = context
        self.client = client
        guarded = Mutex(RawConnectionGuarded(
            machine: RawConnectionMachine(highWatermark: highWatermark, lowWatermark: highWatermark / 2), state: state))
    }

    var engine: CurlEngine { CurlEngine.shared }

    /// `observer` hears the lifecycle (set it before the connection opens).
    /// The connection's own observer, if any, still hears it afterwards.
    func observe(_ observer: @escaping @Sendable (Client.Event) -> Void) {
        guarded.withLock { guarded in
            guarded.observer = Self.chain(observer, then: guarded.ownObserver)
        }
    }

    /// The connection's own observer (its span): hears the lifecycle after
    /// the one `observe` set, whether that was set before or after.
    func addObserver(_ observer: @escaping @Sendable (Client.Event) -> Void) {
        guarded.withLock { guarded in
            guarded.ownObserver = observer
            guarded.observer = Self.chain(guarded.observer, then: observer)
        }
    }

    private static func chain(
        _ first: (@Sendable (Client.Event) -> Void)?, then second: (@Sendable (Client.Event) -> Void)?
    ) -> (@Sendable (Client.Event) -> Void)? {
        guard let first else { return second }
        guard let second else { return first }
        return { event in
            first(event)
            second(event)
        }
    }

    /// Ended (cancelled, failed, or closed).
    var hasEnded: Bool { guarded.withLock { $0.machine.isClosed } }
    /// Started and not ended.
    var isRunning: Bool { guarded.withLock { $0.machine.isRunning } }
    /// Why it ended, if it failed.
    var failure: URLError? { guarded.withLock { $0.failure } }

    func closeForInvalidation() { client.closeForInvalidation(self) }

    // MARK: - Connecting

    /// Joins the session's table and starts connecting, when idle.
    func start() {
        guard guarded.withLock({ $0.machine.phase == .idle }) else { return }
        guard context.registerConnection(self) else {
            return end(Client.failed(URLError.make(
                .cancelled, url: client.url, reason: "The session was invalidated; create a new Session for new tasks.")))
        }
        connect()
    }

    private enum Start { case start(TransferID, TransferRequest), badTarget, nothing }

    /// Starts the connect-only transfer (again, after a TLS challenge was
    /// answered: `reconnecting`).
    private func connect(reconnecting: Bool = false) {
        let start = guarded.withLock { guarded -> Start in
            guard guarded.machine.shouldConnect(reconnecting: reconnecting) else { return .nothing }
            guard let request = client.connectRequest(&guarded.state), let target = request.url,
                case .success(let prepared) = RequestPreparation.transferRequest(
                    for: request, configuration: context.configuration, body: .none,
                    tlsChallenges: tlsChallenges.hop(for: target, remembered: context.tlsChallengeAnswers),
                    connectOnly: true, route: context.connectRoute)
            else { return .badTarget }
            let id = engine.makeTransferID(for: prepared.url, in: context.placement)
            guarded.machine.connecting(id)
            return .start(id, prepared)
        }
        switch start {
        case .start(let id, let prepared):
            if !reconnecting { client.connecting(self) }
            engine.start(id, in: context.placement, request: prepared, collectsMetrics: false, delegate: self)
        case .badTarget:
            end(Client.failed(client.badTargetError))
        case .nothing:
            break
        }
    }

    /// Returns once open; throws once closing or closed.
    func waitUntilOpen() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = guarded.withLock { guarded -> Result<Bool, URLError> in
                switch guarded.machine.openWait {
                case .ready: return .success(true)
                case .closed: return .failure(guarded.failure ?? client.closedError)
                case .wait:
                    guarded.openWaiters.append(continuation)
                    return .success(false)
                }
            }
            switch outcome {
            case .success(true): continuation.resume()
            case .success(false): break
            case .failure(let error): continuation.resume(throwing: error)
            }
        }
    }

    /// Returns once the socket took every byte queued up to `target`.
    func waitUntilWritten(_ target: Int64) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = guarded.withLock { guarded -> Result<Bool, URLError> in
                if guarded.machine.bytesWritten >= target { return .success(true) }
                guard !guarded.machine.isClosed else { return .failure(guarded.failure ?? client.closedError) }
                guarded.writers.append(
                    RawConnectionWriter(serial: guarded.makeSerial(), end: target, continuation: continuation))
                return .success(false)
            }
            switch outcome {
            case .success(true): continuation.resume()
            case .success(false): break
            case .failure(let error): continuation.resume(throwing: error)
            }
        }
    }

    // MARK: - Ending

    /// Ends the connection `how` (if it had not ended).
    func end(_ how: Client.Ending) {
        guarded.withLock { $0.end(how, client: client) }.run(on: self)
    }

    /// Stops the connect-only transfer `id` and its stream.
    func cancelTransfer(_ id: TransferID?) {
        guard let id else { return }
        engine.cancel(id, in: context.engineID, error: URLError(.cancelled))
        engine.closeStream(id)
    }

    // MARK: - Engine callbacks (engine thread)

    func transferDidReceiveHead(_ head: consuming ResponseHead, of id: TransferID) {}
    func transferDidReceiveBody(_ bytes: UnsafeRawBufferPointer, of id: TransferID) -> BodyVerdict { .accepted }
    func transferDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64, of id: TransferID) {}

    func transferDidComplete(_ outcome: TransferOutcome, of id: TransferID) {
        if let report = outcome.tlsChallenge, let target = client.challengeURL {
            // The handshake stopped for a decision; nothing was sent.
            return tlsChallenges.offer(
                report, url: target, remembered: context.tlsChallengeAnswers,
                retry: { [self] in connect(reconnecting: true) }, fail: { [self] in end(Client.failed($0)) })
        }
        if let error = outcome.error { return end(Client.failed(error)) }
        switch client.openingBytes(context: context) {
        case nil:
            let waiters = guarded.withLock { guarded -> [CheckedContinuation<Void, any Error>] in
                guard guarded.machine.connected(handshake: false) == .resumeOpenWaiters else { return [] }
                defer { guarded.openWaiters = [] }
                return guarded.openWaiters
            }
            for waiter in waiters { waiter.resume() }
        case .failure(let error)?:
            engine.closeStream(id)
            end(Client.failed(error))
        case .success(let bytes)?:
            let queued = guarded.withLock { guarded in
                guarded.machine.connected(handshake: true) == .handshake
                    && guarded.machine.queue(bytes.count, handshake: true) != nil
            }
            if queued { engine.sendOnStream(id, bytes) }
        }
    }

    func streamDidReceive(_ bytes: UnsafeRawBufferPointer, of id: TransferID) -> Bool {
        let (keepReading, effects) = guarded.withLock { guarded -> (Bool, Client.Effects) in
            let (verdict, effects) = client.received(bytes, &guarded, id: id)
            switch verdict {
            case .buffered(let count): return (guarded.machine.received(buffered: count), effects)
            case .keepReading: return (true, effects)
            case .stopReading: return (false, effects)
            }
        }
        client.perform(effects, on: self, id: id)
        return keepReading
    }

    func streamDidWrite(totalBytes: Int64, of id: TransferID) {
        let done = guarded.withLock { guarded -> ArraySlice<RawConnectionWriter> in
            guarded.machine.wrote(totalBytes: totalBytes)
            let count = guarded.writers.prefix { $0.end <= totalBytes }.count
            defer { guarded.writers.removeFirst(count) }
            return guarded.writers.prefix(count)
        }
        for writer in done { writer.continuation.resume() }
    }

    func streamDidEnd(_ error: URLError?, of id: TransferID) {
        let effects = guarded.withLock { client.streamEnded(error, &$0) }
        client.perform(effects, on: self, id: id)
    }
}
