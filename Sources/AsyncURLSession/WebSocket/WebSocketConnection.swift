internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One WebSocket connection: libcurl connects (a connect-only transfer:
/// TCP, proxy tunnel, TLS with the session's trust settings), then this
/// object speaks HTTP/1.1 Upgrade and RFC 6455 over the raw stream.
///
/// Threads: engine callbacks and callers meet under `guarded`; waiting
/// callers are resumed after the lock is let go. Backpressure: once
/// `bufferLimit` bytes of messages wait for `receive()`, reading stops
/// until they are taken, so a slow consumer slows the socket.
final class WebSocketConnection: TransferDelegate, RawStreamDelegate, SessionConnection, Sendable {
    let identifier: Int
    let context: SessionContext
    let request: URLRequest
    let handshake: WebSocketHandshake
    /// Messages waiting for `receive()` before reading pauses.
    static let bufferLimit = 1 << 20

    private struct Waiter<Value: Sendable>: Sendable {
        let continuation: CheckedContinuation<Value, any Error>
    }

    private struct Guarded: Sendable {
        var state: WebSocketState = .idle
        var transferID: TransferID?
        var maximumMessageSize = 1 << 20
        var parser = WebSocketFrameParser(maximumFrameSize: 1 << 20)
        var assembler = WebSocketMessageAssembler(maximumMessageSize: 1 << 20)
        var received: [WebSocketMessage] = []
        var receivedBytes = 0
        var readingPaused = false
        var receivers: [Waiter<WebSocketMessage?>] = []
        var openWaiters: [Waiter<Void>] = []
        var queuedBytes: Int64 = 0
        var writeWaiters: [(end: Int64, waiter: Waiter<Void>)] = []
        var pingWaiters: [Waiter<Void>] = []
        var negotiatedProtocol: String?
        var closeCode = WebSocketCloseCode.invalid
        var closeReason: Data?
        /// Why the connection ended, for callers that come after.
        var failure: URLError?
        /// The server's 101 answer, once open.
        var response: HTTPURLResponse?
        var bytesReceived: Int64 = 0
        var bytesSent: Int64 = 0
        /// Accept a 101 without Sec-WebSocket-Accept (see `WebSocketHandshake.validate`).
        var allowsMissingAccept = false
        /// Hears the opening and the end (the classic adapter's delegate calls).
        var observer: (@Sendable (WebSocketLifecycleEvent) -> Void)?
    }

    private let guarded = Mutex(Guarded())
    /// The TLS challenges of a wss connection with a handler.
    let tlsChallenges = ConnectionTLSChallenges()

    init(identifier: Int, context: SessionContext, request: URLRequest) {
        self.identifier = identifier
        self.context = context
        self.request = request
        let protocols = request.value(forHTTPHeaderField: "Sec-WebSocket-Protocol")?
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } ?? []
        handshake = WebSocketHandshake(protocols: protocols)
    }

    private var url: String { request.url?.absoluteString ?? "" }
    private var engine: CurlEngine { CurlEngine.shared }

    // MARK: - Properties

    var maximumMessageSize: Int {
        get { guarded.withLock { $0.maximumMessageSize } }
        set {
            guarded.withLock { guarded in
                guard case .idle = guarded.state else { return }
                guarded.maximumMessageSize = max(1, newValue)
            }
        }
    }

    var negotiatedProtocol: String? { guarded.withLock { $0.negotiatedProtocol } }
    var closeCode: WebSocketCloseCode { guarded.withLock { $0.closeCode } }
    var closeReason: Data? { guarded.withLock { $0.closeReason } }
    var error: URLError? { guarded.withLock { $0.failure } }
    var response: HTTPURLResponse? { guarded.withLock { $0.response } }
    var countOfBytesReceived: Int64 { guarded.withLock { $0.bytesReceived } }
    var countOfBytesSent: Int64 { guarded.withLock { $0.bytesSent } }
    /// Whether it was resumed and has not ended.
    var isRunning: Bool {
        guarded.withLock { guarded in
            switch guarded.state {
            case .idle, .closed: false
            default: true
            }
        }
    }

    var isClosing: Bool {
        guarded.withLock { if case .closing = $0.state { true } else { false } }
    }

    /// Only before `resume()`.
    func allowMissingAcceptField() {
        guarded.withLock { $0.allowsMissingAccept = true }
    }

    /// Only before `resume()`: `observer` hears the opening and the end.
    func observe(_ observer: @escaping @Sendable (WebSocketLifecycleEvent) -> Void) {
        guarded.withLock { $0.observer = observer }
    }

    // MARK: - Opening

    func resume() {
        guard guarded.withLock({ if case .idle = $0.state { return true } else { return false } }) else { return }
        guard context.registerConnection(self) else {
            return fail(
                URLError.make(.cancelled, url: url, reason: "The session was invalidated; create a new Session for new tasks."),
                code: nil)
        }
        connect()
    }

    /// Starts the connect-only transfer (again, after a TLS challenge was
    /// answered: `reconnecting`).
    private func connect(reconnecting: Bool = false) {
        let start = guarded.withLock { guarded -> (TransferID, TransferRequest)? in
            if reconnecting, case .connecting = guarded.state { guarded.state = .idle }
            guard case .idle = guarded.state else { return nil }
            guard let prepared = prepareConnect() else { return nil }
            guarded.parser = WebSocketFrameParser(maximumFrameSize: guarded.maximumMessageSize)
            guarded.assembler = WebSocketMessageAssembler(maximumMessageSize: guarded.maximumMessageSize)
            let id = engine.makeTransferID(for: prepared.url, in: context.placement)
            guarded.transferID = id
            guarded.state = .connecting
            return (id, prepared)
        }
        guard let (id, prepared) = start else {
            if guarded.withLock({ if case .idle = $0.state { return true } else { return false } }) {
                fail(URLError.make(.badURL, url: url, reason: Self.badURLReason(request.url)), code: nil)
            }
            return
        }
        engine.start(id, in: context.placement, request: prepared, collectsMetrics: false, delegate: self)
    }

    private static func badURLReason(_ url: URL?) -> String {
        "A WebSocket URL must be ws:// or wss:// (or http:// / https://) with a host, not '\(url?.absoluteString ?? "")'."
    }

    /// The connect-only transfer to the server's host and port.
    private func prepareConnect() -> TransferRequest? {
        guard let url = request.url, let connectURL = Self.httpURL(for: url) else { return nil }
        var plain = URLRequest(url: connectURL)
        plain.timeoutInterval = request.timeoutInterval
        let prepared = RequestPreparation.transferRequest(
            for: plain, configuration: context.configuration, body: .none,
            tlsChallenges: tlsChallenges.hop(for: connectURL, remembered: context.tlsChallengeAnswers), connectOnly: true)
        guard case .success(let transfer) = prepared else { return nil }
        return transfer
    }

    /// ws → http, wss → https (libcurl connects to the same host and port).
    static func httpURL(for url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let host = components.host, !host.isEmpty
        else { return nil }
        switch components.scheme?.lowercased() {
        case "ws", "http": components.scheme = "http"
        case "wss", "https": components.scheme = "https"
        default: return nil
        }
        return components.url
    }

    /// The Upgrade request (RFC 6455 §4.1), with the request's own fields.
    private func upgradeRequest() -> Data? {
        guard let url = request.url, let host = url.host else { return nil }
        let secure = ["wss", "https"].contains(url.scheme?.lowercased() ?? "")
        let defaultPort = secure ? 443 : 80
        let hostField = (host.contains(":") ? "[\(host)]" : host) + (url.port.map { $0 == defaultPort ? "" : ":\($0)" } ?? "")
        var target = url.path.isEmpty ? "/" : url.path
        if let query = url.query { target += "?" + query }
        var lines = ["GET \(target) HTTP/1.1", "Host: \(hostField)"]
        let reserved: Set<String> = [
            "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol",
            "sec-websocket-extensions", "content-length", "transfer-encoding",
        ]
        for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key })
        where !reserved.contains(name.lowercased()) {
            guard HeaderValidation.problem(name: name, value: value) == nil else { return nil }
            lines.append("\(name): \(value)")
        }
        for (name, value) in context.configuration.httpAdditionalHeaders.sorted(by: { $0.key < $1.key })
        where request.value(forHTTPHeaderField: name) == nil && !reserved.contains(name.lowercased()) {
            guard HeaderValidation.problem(name: name, value: value) == nil else { return nil }
            lines.append("\(name): \(value)")
        }
        for field in handshake.requestFields { lines.append("\(field.name): \(field.value)") }
        return Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    // MARK: - Engine callbacks (engine thread)

    func transferDidReceiveHead(_ head: consuming ResponseHead, of id: TransferID) {}
    func transferDidReceiveBody(_ bytes: UnsafeRawBufferPointer, of id: TransferID) -> BodyVerdict { .accepted }
    func transferDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64, of id: TransferID) {}

    func transferDidComplete(_ outcome: TransferOutcome, of id: TransferID) {
        if let report = outcome.tlsChallenge, let connectURL = request.url.flatMap(Self.httpURL(for:)) {
            // The handshake stopped for a decision; nothing was sent.
            return tlsChallenges.offer(
                report, url: connectURL, remembered: context.tlsChallengeAnswers,
                retry: { [self] in connect(reconnecting: true) }, fail: { [self] in fail($0, code: nil) })
        }
        if let error = outcome.error {
            return fail(error, code: nil)
        }
        guard let upgrade = upgradeRequest() else {
            engine.closeStream(id)
            return fail(
                URLError.make(.badURL, url: url, reason: "A request header holds CR, LF or NUL, or is not a token."),
                code: nil)
        }
        guarded.withLock { guarded in
            guarded.state = .handshaking(head: Data())
            guarded.queuedBytes += Int64(upgrade.count)
        }
        engine.sendOnStream(id, upgrade)
    }

    func streamDidReceive(_ bytes: UnsafeRawBufferPointer, of id: TransferID) -> Bool {
        var actions = Actions()
        let keepReading = guarded.withLock { guarded -> Bool in
            guarded.bytesReceived += Int64(bytes.count)
            switch guarded.state {
            case .handshaking(var head):
                head.append(contentsOf: bytes)
                guard let end = head.firstRange(of: Data("\r\n\r\n".utf8)) else {
                    guarded.state = .handshaking(head: head)
                    if head.count > WebSocketState.maximumHeadSize {
                        actions.fail(&guarded, URLError.make(
                            .badServerResponse, url: url, reason: "The server's handshake answer is too large."),
                            code: nil, close: id)
                    }
                    return !actions.ended
                }
                let answer = acceptHandshake(
                    head.subdata(in: head.startIndex..<end.lowerBound), allowingMissingAccept: guarded.allowsMissingAccept)
                switch answer {
                case .success(let chosen, let response):
                    guarded.negotiatedProtocol = chosen
                    guarded.response = response
                    guarded.state = .open
                    actions.opened = guarded.openWaiters
                    actions.openedEvent = guarded.observer.map { ($0, chosen) }
                    guarded.openWaiters = []
                    let rest = head.subdata(in: end.upperBound..<head.endIndex)
                    if !rest.isEmpty { guarded.parser.append(rest) }
                case .failure(let error):
                    actions.fail(&guarded, error, code: nil, close: id)
                    return false
                }
            case .open, .closing:
                guarded.parser.append(Data(bytes))
            default:
                return false
            }
            readFrames(&guarded, id: id, into: &actions)
            if guarded.receivedBytes >= Self.bufferLimit, !actions.ended {
                guarded.readingPaused = true
                return false
            }
            return !actions.ended
        }
        actions.run(engine: engine, id: id)
        if actions.ended { context.unregisterConnection(identifier) }
        return keepReading
    }

    func streamDidWrite(totalBytes: Int64, of id: TransferID) {
        let done = guarded.withLock { guarded -> [Waiter<Void>] in
            guarded.bytesSent = totalBytes
            let ready = guarded.writeWaiters.prefix { $0.end <= totalBytes }.map(\.waiter)
            guarded.writeWaiters.removeFirst(ready.count)
            return ready
        }
        for waiter in done { waiter.continuation.resume() }
    }

    func streamDidEnd(_ error: URLError?, of id: TransferID) {
        let state = guarded.withLock { $0.state }
        switch (state, error) {
        case (.closing, nil):
            end(.closed, code: nil, reason: nil)
        case (.open, nil):
            end(.droppedAfterOpening(URLError.make(
                .networkConnectionLost, url: url, reason: "The server closed the connection without a close frame.")),
                code: .abnormalClosure, reason: nil)
        case (.open, let error?), (.closing, let error?):
            end(.failed(error), code: .abnormalClosure, reason: nil)
        case (_, let error):
            fail(
                error ?? URLError.make(
                    .badServerResponse, url: url,
                    reason: "The server closed the connection before answering the WebSocket handshake."),
                code: nil)
        }
    }

    // MARK: - Frames

    /// What a turn of reading decided, done after the lock is let go.
    private struct Actions {
        var opened: [Waiter<Void>] = []
        var openedEvent: (observer: @Sendable (WebSocketLifecycleEvent) -> Void, chosen: String?)?
        var delivered: [(Waiter<WebSocketMessage?>, WebSocketMessage)] = []
        var pongsToSend: [Data] = []
        var pongsReceived: [Waiter<Void>] = []
        var closeFrame: Data?
        var closeStream = false
        var ended = false
        var endWaiters = EndWaiters()

        mutating func fail(_ guarded: inout Guarded, _ error: URLError, code: WebSocketCloseCode?, close id: TransferID) {
            endWaiters = EndWaiters.take(from: &guarded, ending: .failed(error), code: code, reason: nil)
            closeStream = true
            ended = true
        }

        func run(engine: CurlEngine, id: TransferID) {
            if let (observer, chosen) = openedEvent { observer(.opened(protocol: chosen)) }
            for waiter in opened { waiter.continuation.resume() }
            for (waiter, message) in delivered { waiter.continuation.resume(returning: message) }
            for waiter in pongsReceived { waiter.continuation.resume() }
            for payload in pongsToSend {
                engine.sendOnStream(id, WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .pong, payload: payload)))
            }
            if let closeFrame { engine.sendOnStream(id, closeFrame) }
            if closeStream { engine.closeStream(id) }
            endWaiters.resume()
        }
    }

    /// Everyone waiting when the connection ends.
    private struct EndWaiters {
        var receivers: [Waiter<WebSocketMessage?>] = []
        var others: [Waiter<Void>] = []
        var error: URLError?
        var endedEvent: (observer: @Sendable (WebSocketLifecycleEvent) -> Void, event: WebSocketLifecycleEvent)?

        static func take(
            from guarded: inout Guarded, ending: WebSocketEnding, code: WebSocketCloseCode?, reason: Data?
        ) -> EndWaiters {
            var waiters = EndWaiters()
            guard !guarded.state.isClosed else { return waiters }
            let error = ending.error
            let wasOpen: Bool
            switch guarded.state {
            case .open, .closing: wasOpen = true
            default: wasOpen = false
            }
            waiters.endedEvent = guarded.observer.map { ($0, .ended(ending, wasOpen: wasOpen)) }
            guarded.observer = nil
            guarded.state = .closed
            // The first close code stays, with its reason: after our close,
            // the server's echo does not replace what we sent.
            if let code, guarded.closeCode == .invalid {
                guarded.closeCode = code
                guarded.closeReason = reason
            }
            if guarded.failure == nil { guarded.failure = error }
            waiters.error = error
            waiters.receivers = guarded.receivers
            waiters.others = guarded.openWaiters + guarded.writeWaiters.map(\.waiter) + guarded.pingWaiters
            guarded.receivers = []
            guarded.openWaiters = []
            guarded.writeWaiters = []
            guarded.pingWaiters = []
            return waiters
        }

        func resume() {
            // Receivers end quietly (nil) after a clean close; an error is thrown.
            for waiter in receivers {
                if let error { waiter.continuation.resume(throwing: error) } else { waiter.continuation.resume(returning: nil) }
            }
            let otherError = error ?? URLError(.networkConnectionLost, userInfo: [
                NSLocalizedDescriptionKey: "The WebSocket is closed.",
            ])
            for waiter in others { waiter.continuation.resume(throwing: otherError) }
            if let (observer, event) = endedEvent { observer(event) }
        }
    }

    private func readFrames(_ guarded: inout Guarded, id: TransferID, into actions: inout Actions) {
        do {
            while let frame = try guarded.parser.next() {
                guard let incoming = try guarded.assembler.receive(frame) else { continue }
                switch incoming {
                case .text(let text): deliver(.string(text), &guarded, &actions)
                case .binary(let data): deliver(.data(data), &guarded, &actions)
                case .ping(let payload): actions.pongsToSend.append(payload)
                case .pong:
                    if !guarded.pingWaiters.isEmpty { actions.pongsReceived.append(guarded.pingWaiters.removeFirst()) }
                case .close(let code, let reason):
                    // Echo the close, code and reason (RFC 6455 §5.5.1; servers
                    // written against libcurl check the reason too), unless
                    // ours came first; then end.
                    if case .open = guarded.state {
                        actions.closeFrame = WebSocketFrameEncoder.encode(WebSocketFrame(
                            opcode: .close,
                            payload: code.map { WebSocketFrameEncoder.closePayload(code: $0, reason: reason) }
                                ?? Data()))
                    }
                    actions.endWaiters = EndWaiters.take(
                        from: &guarded, ending: .closed, code: WebSocketCloseCode(rawValue: Int(code ?? 1005)),
                        reason: reason)
                    actions.closeStream = true
                    actions.ended = true
                    return
                }
            }
        } catch {
            actions.closeFrame = WebSocketFrameEncoder.encode(WebSocketFrame(
                opcode: .close, payload: WebSocketFrameEncoder.closePayload(code: error.closeCode, reason: Data())))
            let failure = URLError.make(
                .badServerResponse, url: url, reason: "The server broke the WebSocket protocol: \(error.reason).")
            actions.fail(&guarded, failure, code: WebSocketCloseCode(rawValue: Int(error.closeCode)), close: id)
        }
    }

    private func deliver(_ message: WebSocketMessage, _ guarded: inout Guarded, _ actions: inout Actions) {
        if !guarded.receivers.isEmpty {
            actions.delivered.append((guarded.receivers.removeFirst(), message))
            return
        }
        guarded.received.append(message)
        guarded.receivedBytes += Self.size(of: message)
    }

    private static func size(of message: WebSocketMessage) -> Int {
        switch message {
        case .string(let text): text.utf8.count
        case .data(let data): data.count
        }
    }

    private enum HandshakeResult {
        case success(String?, HTTPURLResponse?)
        case failure(URLError)
    }

    /// Parses the server's head and checks it.
    private func acceptHandshake(_ head: Data, allowingMissingAccept: Bool) -> HandshakeResult {
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/"), let status = Int(statusParts[1]) else {
            return .failure(URLError.make(
                .badServerResponse, url: url, reason: "The server's handshake answer is not an HTTP response."))
        }
        var fields: [String: String] = [:]
        var headerFields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let rawName = line[..<colon].trimmingCharacters(in: .whitespaces)
            let name = rawName.lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
            headerFields[rawName] = headerFields[rawName].map { "\($0), \(value)" } ?? value
        }
        do {
            let chosen = try handshake.validate(status: status, allowingMissingAccept: allowingMissingAccept) {
                fields[$0.lowercased()]
            }
            let response = request.url.flatMap {
                HTTPURLResponse(url: $0, statusCode: status, httpVersion: String(statusParts[0]), headerFields: headerFields)
            }
            return .success(chosen, response)
        } catch {
            return .failure(URLError.make(.badServerResponse, url: url, reason: error.description))
        }
    }

    // MARK: - Callers

    func waitUntilOpen() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = guarded.withLock { guarded -> Result<Bool, URLError> in
                switch guarded.state {
                case .open: return .success(true)
                case .closed, .closing: return .failure(guarded.failure ?? Self.closedError(url))
                default:
                    guarded.openWaiters.append(Waiter(continuation: continuation))
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

    private static func closedError(_ url: String) -> URLError {
        URLError.make(.networkConnectionLost, url: url, reason: "The WebSocket is closed.")
    }

    /// Queues a frame. Returns at once while at most `sendBufferLimit`
    /// bytes wait to be written; beyond that, waits until the socket has
    /// taken enough of them (so a slow peer slows the sender). No hop to
    /// another thread on the fast path: a message per hop halved the
    /// rate of small messages in flight (websocket-bench).
    func send(_ frame: WebSocketFrame) async throws {
        if !guarded.withLock({ $0.state.isOpen }) { try await waitUntilOpen() }
        let bytes = WebSocketFrameEncoder.encode(frame)
        enum Queued { case done, wait(until: Int64), closed }
        let queued = guarded.withLock { guarded -> Queued in
            guard guarded.state.isOpen, let id = guarded.transferID else { return .closed }
            guarded.queuedBytes += Int64(bytes.count)
            // In the lock: the engine gets frames in the order they were queued.
            engine.sendOnStream(id, bytes)
            let backlog = guarded.queuedBytes - guarded.bytesSent
            return backlog > Self.sendBufferLimit ? .wait(until: guarded.queuedBytes - Self.sendBufferLimit) : .done
        }
        switch queued {
        case .done:
            return
        case .closed:
            throw error ?? Self.closedError(url)
        case .wait(let target):
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = guarded.withLock { guarded -> Result<Bool, URLError> in
                    if guarded.bytesSent >= target { return .success(true) }
                    guard !guarded.state.isClosed else { return .failure(guarded.failure ?? Self.closedError(url)) }
                    guarded.writeWaiters.append((target, Waiter(continuation: continuation)))
                    return .success(false)
                }
                switch outcome {
                case .success(true): continuation.resume()
                case .success(false): break
                case .failure(let error): continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Bytes queued and not yet written past which `send` waits.
    static let sendBufferLimit: Int64 = 256 * 1024

    func sendPing() async throws {
        try await waitUntilOpen()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let sent = guarded.withLock { guarded -> Bool in
                guard guarded.state.isOpen, let id = guarded.transferID else { return false }
                guarded.pingWaiters.append(Waiter(continuation: continuation))
                let frame = WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .ping))
                guarded.queuedBytes += Int64(frame.count)
                engine.sendOnStream(id, frame)
                return true
            }
            if !sent { continuation.resume(throwing: error ?? Self.closedError(url)) }
        }
    }

    /// The next message; nil once the connection closed cleanly. A message
    /// already waiting is taken without suspending.
    func receive() async throws -> WebSocketMessage? {
        if let ready = takeReady() { return try ready.get() }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<WebSocketMessage?, any Error>) in
            if let ready = takeReady(registering: continuation) { continuation.resume(with: ready) }
        }
    }

    /// A waiting message, or the end; nil when there is neither (then
    /// `continuation`, if given, waits for the next message).
    private func takeReady(
        registering continuation: CheckedContinuation<WebSocketMessage?, any Error>? = nil
    ) -> Result<WebSocketMessage?, any Error>? {
        var resume: TransferID?
        let ready = guarded.withLock { guarded -> Result<WebSocketMessage?, any Error>? in
            if !guarded.received.isEmpty {
                let message = guarded.received.removeFirst()
                guarded.receivedBytes -= Self.size(of: message)
                if guarded.readingPaused, guarded.receivedBytes < Self.bufferLimit / 2 {
                    guarded.readingPaused = false
                    resume = guarded.transferID
                }
                return .success(message)
            }
            if guarded.state.isClosed { return guarded.failure.map { .failure($0) } ?? .success(nil) }
            if let continuation { guarded.receivers.append(Waiter(continuation: continuation)) }
            return nil
        }
        if let resume { engine.resumeReadingStream(resume) }
        return ready
    }

    /// Sends a close frame (when open) and lets go of the connection once
    /// the server answers it or closes, or at once when not open yet.
    func close(code: WebSocketCloseCode, reason: Data?) {
        enum Step { case sendClose(TransferID, Data), cancelConnect(TransferID?), nothing }
        let step = guarded.withLock { guarded -> Step in
            switch guarded.state {
            case .open:
                guarded.state = .closing
                guarded.closeCode = code
                guarded.closeReason = reason
                let frame = WebSocketFrameEncoder.encode(WebSocketFrame(
                    opcode: .close,
                    payload: WebSocketFrameEncoder.closePayload(code: UInt16(clamping: code.rawValue), reason: reason ?? Data())))
                return guarded.transferID.map { .sendClose($0, frame) } ?? .nothing
            case .idle, .connecting, .handshaking:
                return .cancelConnect(guarded.transferID)
            case .closing, .closed:
                return .nothing
            }
        }
        switch step {
        case .sendClose(let id, let frame):
            engine.sendOnStream(id, frame)
            // The server's close frame ends it; if it never comes, this does.
            let engine = engine
            Task {
                try? await Task.sleep(nanoseconds: 2_000_000_000)
                engine.closeStream(id)
            }
        case .cancelConnect(let id):
            if let id {
                engine.cancel(id, in: context.engineID, error: URLError(.cancelled))
                engine.closeStream(id)
            }
            fail(URLError.make(.cancelled, url: url, reason: "cancelled"), code: code)
        case .nothing:
            break
        }
    }

    // MARK: - Ending

    func closeForInvalidation() { close(code: .goingAway, reason: nil) }

    /// Ends with `error`; `code` is the close code to report (nil: none,
    /// as before the handshake completed).
    private func fail(_ error: URLError, code: WebSocketCloseCode?) {
        end(.failed(error), code: code, reason: nil)
    }

    private func end(_ ending: WebSocketEnding, code: WebSocketCloseCode?, reason: Data?) {
        let waiters = guarded.withLock { EndWaiters.take(from: &$0, ending: ending, code: code, reason: reason) }
        waiters.resume()
        context.unregisterConnection(identifier)
    }
}
