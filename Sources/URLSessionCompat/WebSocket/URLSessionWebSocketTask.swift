// The adapters' SPI: what only an adapter of the classic API needs (see AsyncURLSession's Adapters.md).
@_spi(Adapters) import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A WebSocket connection (RFC 6455, ws and wss), as Apple's
/// `URLSessionWebSocketTask`, on the core's `WebSocketTask`: the framing
/// is this library's own, so it works whatever libcurl was built with.
///
/// Delegate calls, on the delegate queue and in this order:
/// `didOpenWithProtocol` once the handshake completes, `didCloseWith` when
/// a connection that opened closes, then `didCompleteWithError`. A task
/// whose handshake fails hears only `didCompleteWithError`. Completion
/// handlers of `send`, `receive` and `sendPing` run on the delegate queue
/// too, in the order the results came.
// @unchecked: adds only immutable references to Sendable objects.
open class URLSessionWebSocketTask: URLSessionTask, @unchecked Sendable {
    /// A close frame's status code. The named cases are Apple's; any other
    /// code a peer sends (3000–4999 are libraries' and applications' own,
    /// RFC 6455 §7.4.2) arrives as `.other` with the code as received, as
    /// Apple's `@objc` enumeration carries it, instead of being folded into
    /// a named case. `rawValue` is the code either way, and switches over the
    /// named cases with a `default` (or `@unknown default`) compile as before.
    public enum CloseCode: RawRepresentable, Hashable, Sendable {
        case invalid
        case normalClosure
        case goingAway
        case protocolError
        case unsupportedData
        case noStatusReceived
        case abnormalClosure
        case invalidFramePayloadData
        case policyViolation
        case messageTooBig
        case mandatoryExtensionMissing
        case internalServerError
        case tlsHandshakeFailure
        /// A code with no case of its own (1000–4999), as received.
        case other(Int)

        /// The named case for `rawValue` when there is one, else `.other`;
        /// nil outside 0 and 1000–4999 (no valid close code).
        public init?(rawValue: Int) {
            if let named = Self.named[rawValue] {
                self = named
            } else if (1000..<5000).contains(rawValue) {
                self = .other(rawValue)
            } else {
                return nil
            }
        }

        public var rawValue: Int {
            switch self {
            case .invalid: 0
            case .normalClosure: 1000
            case .goingAway: 1001
            case .protocolError: 1002
            case .unsupportedData: 1003
            case .noStatusReceived: 1005
            case .abnormalClosure: 1006
            case .invalidFramePayloadData: 1007
            case .policyViolation: 1008
            case .messageTooBig: 1009
            case .mandatoryExtensionMissing: 1010
            case .internalServerError: 1011
            case .tlsHandshakeFailure: 1015
            case .other(let code): code
            }
        }

        // Equal codes are equal however they were made (`.other(1000)` is
        // `.normalClosure`).
        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

        private static let named: [Int: CloseCode] = [
            0: .invalid, 1000: .normalClosure, 1001: .goingAway, 1002: .protocolError, 1003: .unsupportedData,
            1005: .noStatusReceived, 1006: .abnormalClosure, 1007: .invalidFramePayloadData, 1008: .policyViolation,
            1009: .messageTooBig, 1010: .mandatoryExtensionMissing, 1011: .internalServerError,
            1015: .tlsHandshakeFailure,
        ]
    }

    public enum Message: Sendable {
        case data(Data)
        case string(String)
    }

    /// Always true: unlike FoundationNetworking's, these tasks do not need
    /// a libcurl built with WebSocket support.
    public static var supportsWebSockets: Bool { true }

    private let socketModel: WebSocketTaskModel
    private var socket: WebSocketTask { socketModel.connection }

    init(socket: WebSocketTask, identifier: Int, session: URLSession) {
        let model = WebSocketTaskModel(socket)
        socketModel = model
        super.init(model: model, identifier: identifier, session: session)
        // Before resume (and before a cancel of a task never resumed, which
        // also completes): the connection reports its opening and its end.
        socket.observeLifecycle { [weak self] event in self?.handle(event) }
        // As FoundationNetworking (its libcurl never checked the field): a
        // 101 without Sec-WebSocket-Accept is accepted; a wrong one is not.
        socket.allowMissingAcceptField()
    }

    /// The largest message received before the connection closes with
    /// `.messageTooBig`; 1 MiB by default. Set it before `resume()`.
    open var maximumMessageSize: Int {
        get { socket.maximumMessageSize }
        set { socket.maximumMessageSize = newValue }
    }

    /// `.invalid` until the connection closes. A server that ends the
    /// connection after opening without a close frame reads
    /// `.normalClosure`, as on FoundationNetworking.
    open var closeCode: CloseCode { socketModel.closeCode }
    open var closeReason: Data? { socketModel.closeReason }

    /// Connects and opens the WebSocket.
    open override func resume() {
        guard socketModel.markResumed() else { return }
        socket.challengeHandler = connectionChallengeHandler()
        socket.resume()
    }

    /// Does nothing: a WebSocket connection is not paused (messages not
    /// received wait in a bounded buffer, which then slows the server).
    open override func suspend() {}

    /// Closes with `.goingAway`.
    open override func cancel() {
        cancel(with: .goingAway, reason: nil)
    }

    /// Sends a close frame with `closeCode` and `reason` (or, before the
    /// connection opened, stops it); the task completes once the server
    /// answers or closes.
    open func cancel(with closeCode: CloseCode, reason: Data?) {
        guard state != .completed else { return }
        socketModel.markCancelRequested()
        socket.cancel(with: WebSocketCloseCode(rawValue: closeCode.rawValue), reason: reason)
    }

    // MARK: - Messages

    public func send(_ message: Message) async throws {
        switch message {
        case .string(let text): try await socket.send(.string(text))
        case .data(let data): try await socket.send(.data(data))
        }
    }

    public func send(_ message: Message, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        answerOnDelegateQueue({ try await self.send(message) }, completion: { completionHandler($0.error) })
    }

    /// The next message. Throws once the connection closed:
    /// `URLError(.networkConnectionLost)` after a close, the failure otherwise.
    public func receive() async throws -> Message {
        switch try await socket.receive() {
        case .string(let text): return .string(text)
        case .data(let data): return .data(data)
        }
    }

    public func receive(completionHandler: @escaping @Sendable (Result<Message, any Error>) -> Void) {
        answerOnDelegateQueue({ try await self.receive() }, completion: completionHandler)
    }

    /// Sends a ping; returns when its pong arrives.
    open func sendPing() async throws {
        try await socket.sendPing()
    }

    open func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void) {
        answerOnDelegateQueue({ try await self.sendPing() }, completion: { pongReceiveHandler($0.error) })
    }

    // MARK: - Delegate calls

    private func handle(_ event: WebSocketLifecycleEvent) {
        guard let session else { return }
        let lane = laneMakingIt(with: session.makeDelegateLane)
        switch event {
        case .opened(let chosen):
            lane.post { [self] in deliverOpen(chosen, session: session) }
        case .ended(let ending, let wasOpen):
            var dropped = false
            if case .droppedAfterOpening = ending { dropped = true }
            socketModel.markEnded(droppedAfterOpening: dropped)
            lane.post { [self] in
                if wasOpen {
                    deliverOpen(socket.negotiatedProtocol, session: session)
                    let (code, reason) = (closeCode, closeReason)
                    notify(URLSessionWebSocketDelegate.self, session: session) {
                        $0.urlSession(session, webSocketTask: self, didCloseWith: code, reason: reason)
                    }
                }
                // As FoundationNetworking: a connection that opened and then
                // ended without a protocol failure completed its transfer.
                let error: (any Error)? = wasOpen && ending.isOrderly ? nil : ending.failure
                notify(URLSessionTaskDelegate.self, session: session) {
                    $0.urlSession(session, task: self, didCompleteWithError: error)
                }
                session.taskDidCompleteWithoutWaiting(self)
            }
        }
    }

    private func deliverOpen(_ chosen: String?, session: URLSession) {
        guard socketModel.takeOpenDelivery() else { return }
        notify(URLSessionWebSocketDelegate.self, session: session) {
            $0.urlSession(session, webSocketTask: self, didOpenWithProtocol: chosen)
        }
    }
}

extension WebSocketEnding {
    /// Closed by close frames, or dropped by the server after opening.
    var isOrderly: Bool {
        switch self {
        case .closed, .droppedAfterOpening: true
        case .failed: false
        }
    }

    var failure: URLError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

extension Result {
    fileprivate var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
