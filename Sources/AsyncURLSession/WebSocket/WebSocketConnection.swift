internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One WebSocket connection: a raw connection (see `RawConnection`: libcurl
/// connects, TCP, proxy tunnel, TLS with the session's trust settings) whose
/// client speaks HTTP/1.1 Upgrade and RFC 6455 over it. Backpressure: once
/// `WebSocketClient.bufferLimit` bytes of messages wait for `receive()`,
/// reading stops until they are taken, so a slow consumer slows the socket.
typealias WebSocketConnection = RawConnection<WebSocketClient>

/// What a WebSocket adds to a raw connection: the Upgrade handshake,
/// framing, ping and pong, close codes, message assembly.
struct WebSocketClient: RawConnectionClient {
    let request: URLRequest
    let handshake: WebSocketHandshake
    /// Messages waiting for `receive()` before reading pauses.
    static let bufferLimit = 1 << 20
    /// Bytes queued and not yet written past which `send` waits.
    static let sendBufferLimit: Int64 = 256 * 1024

    init(request: URLRequest) {
        self.request = request
        let protocols = request.value(forHTTPHeaderField: "Sec-WebSocket-Protocol")?
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } ?? []
        handshake = WebSocketHandshake(protocols: protocols)
    }

    typealias State = WebSocketState
    typealias Event = WebSocketLifecycleEvent

    /// How it ends, with the close code to report (nil: none, as before the
    /// handshake completed) and its reason.
    struct Ending: Sendable {
        let ending: WebSocketEnding
        var code: WebSocketCloseCode?
        var reason: Data?
    }

    /// What a turn of reading decided, done after the lock is let go.
    struct Effects: Sendable {
        var opened: [CheckedContinuation<Void, any Error>] = []
        var openedEvent: (observer: @Sendable (WebSocketLifecycleEvent) -> Void, chosen: String?)?
        var delivered: [(CheckedContinuation<WebSocketMessage?, any Error>, WebSocketMessage)] = []
        var pongsToSend: [Data] = []
        var pongsReceived: [CheckedContinuation<Void, any Error>] = []
        var closeFrame: Data?
        var closeStream = false
        var end: RawConnectionEnd<WebSocketClient>?
        var ended: Bool { end != nil }

        mutating func fail(_ guarded: inout RawConnectionGuarded<WebSocketClient>, _ error: URLError, code: WebSocketCloseCode?, client: WebSocketClient) {
            end = guarded.end(Ending(ending: .failed(error), code: code), client: client)
            closeStream = true
        }
    }

    /// What `send` does once its frame is queued.
    enum Queued { case done, wait(until: Int64), closed }

    /// The receivers and pings waiting when the connection ends.
    struct EndEffects: Sendable {
        let receivers: [CheckedContinuation<WebSocketMessage?, any Error>]
        let pingWaiters: [CheckedContinuation<Void, any Error>]
        let error: URLError?
        let closedError: URLError
    }

    var url: String { request.url?.absoluteString ?? "" }
    var closedError: URLError { URLError.make(.networkConnectionLost, url: url, reason: "The WebSocket is closed.") }
    var challengeURL: URL? { request.url.flatMap(Self.httpURL(for:)) }
    var badTargetError: URLError {
        URLError.make(.badURL, url: url, reason:
            "A WebSocket URL must be ws:// or wss:// (or http:// / https://) with a host, not '\(request.url?.absoluteString ?? "")'.")
    }
    static var errorReplacesCleanEnd: Bool { false }
    static func failed(_ error: URLError) -> Ending { Ending(ending: .failed(error)) }
    static func error(of ending: Ending) -> URLError? { ending.ending.error }

    /// The connect-only transfer to the server's host and port.
    func connectRequest(_ state: inout WebSocketState) -> URLRequest? {
        guard let url = request.url, let connectURL = Self.httpURL(for: url) else { return nil }
        var plain = URLRequest(url: connectURL)
        plain.timeoutInterval = request.timeoutInterval
        state.prepareForConnection()
        return plain
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

    func openingBytes(context: SessionContext) -> Result<Data, URLError>? {
        guard let upgrade = upgradeRequest(context: context) else {
            return .failure(URLError.make(
                .badURL, url: url, reason: "A request header holds CR, LF or NUL, or is not a token."))
        }
        return .success(upgrade)
    }

    /// The Upgrade request (RFC 6455 §4.1), with the request's own fields.
    private func upgradeRequest(context: SessionContext) -> Data? {
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

    // MARK: - Engine callbacks (under the lock)

    func received(
        _ bytes: UnsafeRawBufferPointer, _ guarded: inout RawConnectionGuarded<Self>, id: TransferID
    ) -> (RawConnectionReceiveVerdict, Effects) {
        var effects = Effects()
        guarded.state.count(bytes.count)
        switch guarded.machine.phase {
        case .handshaking:
            let read = guarded.state.readHandshake(bytes)
            guard case .complete(let head, let rest) = read else {
                if case .incomplete(tooLarge: true) = read {
                    effects.fail(&guarded, URLError.make(
                        .badServerResponse, url: url, reason: "The server's handshake answer is too large."),
                        code: nil, client: self)
                }
                return (effects.ended ? .stopReading : .keepReading, effects)
            }
            switch acceptHandshake(head, allowingMissingAccept: guarded.state.allowsMissingAccept) {
            case .success(let chosen, let response):
                guarded.state.opened(protocol: chosen, response: response)
                if guarded.machine.handshakeSucceeded() == .resumeOpenWaiters {
                    effects.opened = guarded.openWaiters
                    guarded.openWaiters = []
                }
                effects.openedEvent = guarded.observer.map { ($0, chosen) }
                if !rest.isEmpty { guarded.state.appendFrames(rest) }
            case .failure(let error):
                effects.fail(&guarded, error, code: nil, client: self)
                return (.stopReading, effects)
            }
        case .open, .closing:
            guarded.state.appendFrames(Data(bytes))
        case .idle, .connecting, .closed:
            return (.stopReading, effects)
        }
        readFrames(&guarded, into: &effects)
        return (effects.ended ? .stopReading : .buffered(guarded.state.receivedBytes), effects)
    }

    func streamEnded(_ error: URLError?, _ guarded: inout RawConnectionGuarded<Self>) -> Effects {
        let how: Ending
        switch (guarded.machine.phase, error) {
        case (.closing, nil):
            how = Ending(ending: .closed)
        case (.open, nil):
            how = Ending(
                ending: .droppedAfterOpening(URLError.make(
                    .networkConnectionLost, url: url, reason: "The server closed the connection without a close frame.")),
                code: .abnormalClosure)
        case (.open, let error?), (.closing, let error?):
            how = Ending(ending: .failed(error), code: .abnormalClosure)
        case (_, let error):
            how = Self.failed(
                error ?? URLError.make(
                    .badServerResponse, url: url,
                    reason: "The server closed the connection before answering the WebSocket handshake."))
        }
        return Effects(end: guarded.end(how, client: self))
    }

    func ending(_ how: Ending, wasOpen: Bool, _ guarded: inout RawConnectionGuarded<Self>) -> (EndEffects, Event) {
        // The first close code stays, with its reason: after our close, the
        // server's echo does not replace what we sent.
        if let code = how.code { guarded.state.recordClose(code: code, reason: how.reason) }
        let (receivers, pingWaiters) = guarded.state.takeWaitersAtEnd()
        let effects = EndEffects(
            receivers: receivers, pingWaiters: pingWaiters, error: how.ending.error, closedError: closedError)
        return (effects, .ended(how.ending, wasOpen: wasOpen))
    }

    func perform(_ effects: Effects, on connection: WebSocketConnection, id: TransferID) {
        if let (observer, chosen) = effects.openedEvent { observer(.opened(protocol: chosen)) }
        for waiter in effects.opened { waiter.resume() }
        for (waiter, message) in effects.delivered { waiter.resume(returning: message) }
        for waiter in effects.pongsReceived { waiter.resume() }
        let engine = connection.engine
        for payload in effects.pongsToSend {
            engine.sendOnStream(id, WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .pong, payload: payload)))
        }
        if let closeFrame = effects.closeFrame { engine.sendOnStream(id, closeFrame) }
        if effects.closeStream { engine.closeStream(id) }
        effects.end?.run(on: connection)
    }

    func finish(_ effects: EndEffects) {
        // Receivers end quietly (nil) after a clean close; an error is thrown.
        for waiter in effects.receivers {
            if let error = effects.error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
        }
        for waiter in effects.pingWaiters { waiter.resume(throwing: effects.error ?? effects.closedError) }
    }

    func closeForInvalidation(_ connection: WebSocketConnection) { connection.close(code: .goingAway, reason: nil) }

    // MARK: - Frames

    private func readFrames(_ guarded: inout RawConnectionGuarded<Self>, into effects: inout Effects) {
        do {
            while let incoming = try guarded.state.nextIncoming() {
                switch incoming {
                case .text(let text): Self.deliver(.string(text), &guarded.state, &effects)
                case .binary(let data): Self.deliver(.data(data), &guarded.state, &effects)
                case .ping(let payload): effects.pongsToSend.append(payload)
                case .pong:
                    if let waiter = guarded.state.pongArrived() { effects.pongsReceived.append(waiter) }
                case .close(let code, let reason):
                    // Echo the close, code and reason (RFC 6455 §5.5.1; servers
                    // written against libcurl check the reason too), unless
                    // ours came first; then end.
                    if guarded.machine.isOpen {
                        effects.closeFrame = WebSocketFrameEncoder.encode(WebSocketFrame(
                            opcode: .close,
                            payload: code.map { WebSocketFrameEncoder.closePayload(code: $0, reason: reason) }
                                ?? Data()))
                    }
                    effects.end = guarded.end(
                        Ending(ending: .closed, code: WebSocketCloseCode(rawValue: Int(code ?? 1005)), reason: reason),
                        client: self)
                    effects.closeStream = true
                    return
                }
            }
        } catch {
            effects.closeFrame = WebSocketFrameEncoder.encode(WebSocketFrame(
                opcode: .close, payload: WebSocketFrameEncoder.closePayload(code: error.closeCode, reason: Data())))
            let failure = URLError.make(
                .badServerResponse, url: url, reason: "The server broke the WebSocket protocol: \(error.reason).")
            effects.fail(&guarded, failure, code: WebSocketCloseCode(rawValue: Int(error.closeCode)), client: self)
        }
    }

    private static func deliver(_ message: WebSocketMessage, _ state: inout WebSocketState, _ effects: inout Effects) {
        if let receiver = state.deliver(message) { effects.delivered.append((receiver, message)) }
    }

    static func size(of message: WebSocketMessage) -> Int {
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
}

extension RawConnection where Client == WebSocketClient {
    convenience init(identifier: Int, context: SessionContext, request: URLRequest) {
        self.init(
            identifier: identifier, context: context, client: WebSocketClient(request: request), state: WebSocketState(),
            highWatermark: WebSocketClient.bufferLimit)
    }

    var request: URLRequest { client.request }

    // MARK: - Properties

    var maximumMessageSize: Int {
        get { guarded.withLock { $0.state.maximumMessageSize } }
        set {
            guarded.withLock { guarded in
                guard guarded.machine.phase == .idle else { return }
                guarded.state.setMaximumMessageSize(newValue)
            }
        }
    }

    var negotiatedProtocol: String? { guarded.withLock { $0.state.negotiatedProtocol } }
    var closeCode: WebSocketCloseCode { guarded.withLock { $0.state.closeCode } }
    var closeReason: Data? { guarded.withLock { $0.state.closeReason } }
    var error: URLError? { failure }
    var response: HTTPURLResponse? { guarded.withLock { $0.state.response } }
    var countOfBytesReceived: Int64 { guarded.withLock { $0.state.bytesReceived } }
    var countOfBytesSent: Int64 { guarded.withLock { $0.machine.bytesWritten } }
    var isClosing: Bool { guarded.withLock { $0.machine.phase == .closing } }

    /// Only before `resume()`.
    func allowMissingAcceptField() {
        guarded.withLock { $0.state.allowMissingAccept() }
    }

    /// With a tracer or a metrics factory in use, the connection is one
    /// client span (and one request in the metrics) from the Upgrade to the
    /// end, as a task is: its 101, its error if it failed.
    func resume() {
        if let observation = TaskObservation.make(configuration: context.configuration, request: request) {
            observation.started()
            // The upgrade is the one hop (its client span). It is framed
            // from the connection's own `request`: trace headers put on
            // this copy are not sent (a WebSocket never sent them).
            var upgrade = request
            observation.hop(&upgrade, via: "network")
            addObserver { [weak self] event in
                switch event {
                case .opened:
                    observation.response(status: 101, httpVersion: "HTTP/1.1")
                case .ended(let ending, _):
                    observation.hopEnded(metrics: nil, error: ending.error)
                    observation.ended(
                        error: ending.error, bytesSent: self?.countOfBytesSent ?? 0,
                        bytesReceived: self?.countOfBytesReceived ?? 0, redirects: 0)
                }
            }
        }
        start()
    }

    // MARK: - Callers

    /// Queues a frame. Returns at once while at most `sendBufferLimit`
    /// bytes wait to be written; beyond that, waits until the socket has
    /// taken enough of them (so a slow peer slows the sender). No hop to
    /// another thread on the fast path: a message per hop halved the
    /// rate of small messages in flight (websocket-bench).
    func send(_ frame: WebSocketFrame) async throws {
        if !guarded.withLock({ $0.machine.isOpen }) { try await waitUntilOpen() }
        let bytes = WebSocketFrameEncoder.encode(frame)
        let queued = guarded.withLock { guarded -> WebSocketClient.Queued in
            guard let (id, end) = guarded.machine.queue(bytes.count) else { return .closed }
            // In the lock: the engine gets frames in the order they were queued.
            engine.sendOnStream(id, bytes)
            let limit = WebSocketClient.sendBufferLimit
            return guarded.machine.backlog > limit ? .wait(until: end - limit) : .done
        }
        switch queued {
        case .done: return
        case .closed: throw error ?? client.closedError
        case .wait(let target): try await waitUntilWritten(target)
        }
    }

    func sendPing() async throws {
        try await waitUntilOpen()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let frame = WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .ping))
            let sent = guarded.withLock { guarded -> Bool in
                guard let (id, _) = guarded.machine.queue(frame.count) else { return false }
                guarded.state.waitForPong(continuation)
                engine.sendOnStream(id, frame)
                return true
            }
            if !sent { continuation.resume(throwing: error ?? client.closedError) }
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
            if let message = guarded.state.takeMessage() {
                resume = guarded.machine.drained(buffered: guarded.state.receivedBytes)
                return .success(message)
            }
            if guarded.machine.isClosed { return guarded.failure.map { .failure($0) } ?? .success(nil) }
            if let continuation { guarded.state.waitForMessage(continuation) }
            return nil
        }
        if let resume { engine.resumeReadingStream(resume) }
        return ready
    }

    /// Sends a close frame (when open) and lets go of the connection once
    /// the server answers it or closes, or at once when not open yet.
    func close(code: WebSocketCloseCode, reason: Data?) {
        let action = guarded.withLock { guarded -> (RawConnectionMachine<TransferID>.CloseAction, Data?) in
            let action = guarded.machine.close()
            guard case .tellPeer = action else { return (action, nil) }
            guarded.state.recordClose(code: code, reason: reason)
            let frame = WebSocketFrameEncoder.encode(WebSocketFrame(
                opcode: .close,
                payload: WebSocketFrameEncoder.closePayload(code: UInt16(clamping: code.rawValue), reason: reason ?? Data())))
            return (action, frame)
        }
        switch action {
        case (.tellPeer(let id), let frame?):
            engine.sendOnStream(id, frame)
            // The server's close frame ends it; if it never comes, this does.
            let engine = engine
            Task {
                try? await Task.sleep(nanoseconds: 2_000_000_000)
                engine.closeStream(id)
            }
        case (.cancelConnect(let id), _):
            cancelTransfer(id)
            end(WebSocketClient.Ending(ending: .failed(URLError.make(.cancelled, url: client.url, reason: "cancelled")), code: code))
        default:
            break
        }
    }
}
