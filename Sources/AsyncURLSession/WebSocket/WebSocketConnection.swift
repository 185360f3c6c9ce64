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
    }

    private let guarded = Mutex(Guarded())

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

    // MARK: - Opening

    func resume() {
        guard guarded.withLock({ if case .idle = $0.state { return true } else { return false } }) else { return }
        guard context.registerConnection(self) else {
            return fail(
                URLError.make(.cancelled, url: url, reason: "The session was invalidated; create a new Session for new tasks."),
                code: .abnormalClosure)
        }
        let start = guarded.withLock { guarded -> (TransferID, TransferRequest)? in
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
                fail(URLError.make(.badURL, url: url, reason: Self.badURLReason(request.url)), code: .abnormalClosure)
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
            for: plain, configuration: context.configuration, body: .none, connectOnly: true)
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
        if let error = outcome.error {
            return fail(error, code: .abnormalClosure)
        }
        guard let upgrade = upgradeRequest() else {
            engine.closeStream(id)
            return fail(
                URLError.make(.badURL, url: url, reason: "A request header holds CR, LF or NUL, or is not a token."),
                code: .abnormalClosure)
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
            switch guarded.state {
            case .handshaking(var head):
                head.append(contentsOf: bytes)
                guard let end = head.firstRange(of: Data("\r\n\r\n".utf8)) else {
                    guarded.state = .handshaking(head: head)
                    if head.count > WebSocketState.maximumHeadSize {
                        actions.fail(&guarded, URLError.make(
                            .badServerResponse, url: url, reason: "The server's handshake answer is too large."),
                            code: .abnormalClosure, close: id)
                    }
                    return !actions.ended
                }
                switch acceptHandshake(head.subdata(in: head.startIndex..<end.lowerBound)) {
                case .success(let chosen):
                    guarded.negotiatedProtocol = chosen
                    guarded.state = .open
                    actions.opened = guarded.openWaiters
                    guarded.openWaiters = []
                    let rest = head.subdata(in: end.upperBound..<head.endIndex)
                    if !rest.isEmpty { guarded.parser.append(rest) }
                case .failure(let error):
                    actions.fail(&guarded, error, code: .abnormalClosure, close: id)
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
            let ready = guarded.writeWaiters.prefix { $0.end <= totalBytes }.map(\.waiter)
            guarded.writeWaiters.removeFirst(ready.count)
            return ready
        }
        for waiter in done { waiter.continuation.resume() }
    }

    func streamDidEnd(_ error: URLError?, of id: TransferID) {
        let wasClosing = guarded.withLock { guarded -> Bool in
            if case .closing = guarded.state { return true }
            return false
        }
        if wasClosing, error == nil {
            finish(code: nil, reason: nil, error: nil)
        } else {
            fail(
                error ?? URLError.make(
                    .networkConnectionLost, url: url, reason: "The server closed the connection without a close frame."),
                code: .abnormalClosure)
        }
    }

    // MARK: - Frames

    /// What a turn of reading decided, done after the lock is let go.
    private struct Actions {
        var opened: [Waiter<Void>] = []
        var delivered: [(Waiter<WebSocketMessage?>, WebSocketMessage)] = []
        var pongsToSend: [Data] = []
        var pongsReceived: [Waiter<Void>] = []
        var closeFrame: Data?
        var closeStream = false
        var ended = false
        var endWaiters = EndWaiters()

        mutating func fail(_ guarded: inout Guarded, _ error: URLError, code: WebSocketCloseCode, close id: TransferID) {
            endWaiters = EndWaiters.take(from: &guarded, error: error, code: code, reason: nil)
            closeStream = true
            ended = true
        }

        func run(engine: CurlEngine, id: TransferID) {
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

        static func take(
            from guarded: inout Guarded, error: URLError?, code: WebSocketCloseCode?, reason: Data?
        ) -> EndWaiters {
            var waiters = EndWaiters()
            guard !guarded.state.isClosed else { return waiters }
            guarded.state = .closed
            if let code, guarded.closeCode == .invalid { guarded.closeCode = code }
            if let reason { guarded.closeReason = reason }
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
                    // Echo the close (unless ours came first), then end.
                    if case .open = guarded.state {
                        actions.closeFrame = WebSocketFrameEncoder.encode(WebSocketFrame(
                            opcode: .close,
                            payload: code.map { WebSocketFrameEncoder.closePayload(code: $0, reason: Data()) } ?? Data()))
                    }
                    actions.endWaiters = EndWaiters.take(
                        from: &guarded, error: nil, code: WebSocketCloseCode(rawValue: Int(code ?? 1005)), reason: reason)
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
        case success(String?)
        case failure(URLError)
    }

    /// Parses the server's head and checks it.
    private func acceptHandshake(_ head: Data) -> HandshakeResult {
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/"), let status = Int(statusParts[1]) else {
            return .failure(URLError.make(
                .badServerResponse, url: url, reason: "The server's handshake answer is not an HTTP response."))
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
        }
        do {
            return .success(try handshake.validate(status: status) { fields[$0.lowercased()] })
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

    /// Queues a frame and waits until it was handed to the socket.
    func send(_ frame: WebSocketFrame) async throws {
        try await waitUntilOpen()
        let bytes = WebSocketFrameEncoder.encode(frame)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let id = guarded.withLock { guarded -> TransferID? in
                guard guarded.state.isOpen, let id = guarded.transferID else { return nil }
                guarded.queuedBytes += Int64(bytes.count)
                guarded.writeWaiters.append((guarded.queuedBytes, Waiter(continuation: continuation)))
                // In the lock: the engine gets frames in the order their
                // waiters were queued (enqueueing runs nothing inline).
                engine.sendOnStream(id, bytes)
                return id
            }
            if id == nil { continuation.resume(throwing: error ?? Self.closedError(url)) }
        }
    }

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

    /// The next message; nil once the connection closed cleanly.
    func receive() async throws -> WebSocketMessage? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<WebSocketMessage?, any Error>) in
            enum Outcome { case message(WebSocketMessage, resume: TransferID?), waiting, ended(URLError?) }
            let outcome = guarded.withLock { guarded -> Outcome in
                if !guarded.received.isEmpty {
                    let message = guarded.received.removeFirst()
                    guarded.receivedBytes -= Self.size(of: message)
                    var resume: TransferID?
                    if guarded.readingPaused, guarded.receivedBytes < Self.bufferLimit / 2 {
                        guarded.readingPaused = false
                        resume = guarded.transferID
                    }
                    return .message(message, resume: resume)
                }
                if guarded.state.isClosed { return .ended(guarded.failure) }
                guarded.receivers.append(Waiter(continuation: continuation))
                return .waiting
            }
            switch outcome {
            case .message(let message, let resume):
                if let resume { engine.resumeReadingStream(resume) }
                continuation.resume(returning: message)
            case .waiting:
                break
            case .ended(let error):
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: nil) }
            }
        }
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

    private func fail(_ error: URLError, code: WebSocketCloseCode) {
        let waiters = guarded.withLock { EndWaiters.take(from: &$0, error: error, code: code, reason: nil) }
        waiters.resume()
        context.unregisterConnection(identifier)
    }

    private func finish(code: WebSocketCloseCode?, reason: Data?, error: URLError?) {
        let waiters = guarded.withLock { EndWaiters.take(from: &$0, error: error, code: code, reason: reason) }
        waiters.resume()
        context.unregisterConnection(identifier)
    }
}
