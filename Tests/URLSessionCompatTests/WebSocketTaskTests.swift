import Foundation
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// Records the WebSocket delegate calls by name, as legacy test suites do.
final class WebSocketRecorder: NSObject, URLSessionWebSocketDelegate, Sendable {
    private let recorded = Mutex<[String]>([])
    private let openedProtocol = Mutex<String??>(nil)
    let completed = Signal()
    let opened = Signal()
    private let completion = Mutex<(any Error)?>(nil)
    private let closed = Mutex<(code: URLSessionWebSocketTask.CloseCode, reason: Data?)?>(nil)

    /// What `didCloseWith` was given.
    var closeArguments: (code: URLSessionWebSocketTask.CloseCode, reason: Data?)? { closed.withLock { $0 } }
    var calls: [String] { recorded.withLock { $0 } }
    var chosenProtocol: String?? { openedProtocol.withLock { $0 } }
    var completionError: (any Error)? { completion.withLock { $0 } }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        openedProtocol.withLock { $0 = .some(`protocol`) }
        recorded.withLock { $0.append("didOpenWithProtocol") }
        opened.fire()
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?
    ) {
        closed.withLock { $0 = (closeCode, reason) }
        recorded.withLock { $0.append("didCloseWith") }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        completion.withLock { $0 = error }
        recorded.withLock { $0.append("didCompleteWithError") }
        completed.fire()
    }
}

/// `URLSessionWebSocketTask` and its delegate, against servers written the
/// way FoundationNetworking's own test server is (a 101 without
/// Sec-WebSocket-Accept, one frame per read) and against the loopback
/// server's NIO WebSocket routes.
@Suite struct WebSocketTaskTests {
    /// What a server written against libcurl answers: no Sec-WebSocket-Accept.
    static func switching(protocol chosen: String? = nil) -> FaultServer.Step {
        .send(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + (chosen.map { "Sec-WebSocket-Protocol: \($0)\r\n" } ?? "") + "\r\n")
    }

    static let closePayload: [UInt8] = [0x03, 0xE8] + Array("BuhBye".utf8)
    static let binary: [UInt8] = [0x20, 0x22, 0x10, 0x03]

    static func wsURL(_ server: FaultServer, _ path: String) -> URL {
        URL(string: "ws://127.0.0.1:\(server.port)\(path)")!
    }

    @Test func fullExchange_thenServerClose_makesOpenCloseComplete() async throws {
        let script: [FaultServer.Step] = [
            .readRequest, Self.switching(),
            .expectFrame(opcode: 1, payload: Array("Hello".utf8)), .sendFrame(opcode: 1, payload: Array("Hello".utf8)),
            .expectFrame(opcode: 2, payload: Self.binary), .sendFrame(opcode: 2, payload: Self.binary),
            .expectFrame(opcode: 9, payload: []), .sendFrame(opcode: 10, payload: []),
            .sendFrame(opcode: 9, payload: Array("Hi".utf8)), .expectFrame(opcode: 10, payload: Array("Hi".utf8)),
            .sendFrame(opcode: 8, payload: Self.closePayload), .expectFrame(opcode: 8, payload: Self.closePayload),
        ]
        try await withFaultServer([script]) { server in
            let delegate = WebSocketRecorder()
            let task = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
                .webSocketTask(with: URLRequest(url: Self.wsURL(server, "/web-socket")))
            task.resume()
            try await task.send(.string("Hello"))
            guard case .string(let text) = try await task.receive() else { throw TestFailure("not a string") }
            #expect(text == "Hello")
            try await task.send(.data(Data(Self.binary)))
            guard case .data(let data) = try await task.receive() else { throw TestFailure("not data") }
            #expect(data == Data(Self.binary))
            try await task.sendPing()
            await delegate.completed.wait()
            let error = await #expect(throws: URLError.self) { _ = try await task.receive() }
            #expect(error?.code == .networkConnectionLost)
            #expect(delegate.calls == ["didOpenWithProtocol", "didCloseWith", "didCompleteWithError"])
            #expect(delegate.completionError == nil)
            #expect(task.closeCode == .normalClosure)
            #expect(task.closeReason == Data("BuhBye".utf8))
            #expect(task.state == .completed)
            #expect(server.scriptFailures.isEmpty)
        }
    }

    @Test func applicationCloseCode_reachesTheDelegateAndTheTask_asSent() async throws {
        let bye: [UInt8] = [0x0F, 0xA0] + Array("bye".utf8)  // 4000 "bye"
        let script: [FaultServer.Step] = [
            .readRequest, Self.switching(), .sendFrame(opcode: 8, payload: bye), .expectFrame(opcode: 8, payload: bye),
        ]
        try await withFaultServer([script]) { server in
            let delegate = WebSocketRecorder()
            let task = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
                .webSocketTask(with: Self.wsURL(server, "/web-socket"))
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.closeArguments?.code.rawValue == 4000)
            #expect(delegate.closeArguments?.code == .other(4000))
            #expect(delegate.closeArguments?.reason == Data("bye".utf8))
            #expect(task.closeCode.rawValue == 4000)
            switch task.closeCode {
            case .normalClosure, .unsupportedData: Issue.record("read as \(task.closeCode)")
            default: break
            }
        }
    }

    @Test func closeCode_namedCodesAreTheirCases_andUnnamedOnesKeepTheirValue() {
        typealias Code = URLSessionWebSocketTask.CloseCode
        #expect(Code(rawValue: 1000) == .normalClosure)
        if case .normalClosure? = Code(rawValue: 1000) {} else { Issue.record("1000 is not .normalClosure") }
        #expect(Code(rawValue: 3001)?.rawValue == 3001)
        #expect(Code(rawValue: 4999) == .other(4999))
        #expect(Code(rawValue: 5000) == nil)
        #expect(Code(rawValue: 999) == nil)
        #expect(Code(rawValue: 0) == .invalid)
        #expect(Code.other(1001) == .goingAway)
    }

    @Test func completionHandlers_runOnTheDelegateQueue() async throws {
        let script: [FaultServer.Step] = [
            .readRequest, Self.switching(),
            .expectFrame(opcode: 1, payload: Array("Hello".utf8)), .sendFrame(opcode: 1, payload: Array("Hello".utf8)),
            .expectFrame(opcode: 9, payload: []), .sendFrame(opcode: 10, payload: []),
            .sendFrame(opcode: 8, payload: Self.closePayload), .expectFrame(opcode: 8, payload: Self.closePayload),
        ]
        try await withFaultServer([script]) { server in
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let delegate = WebSocketRecorder()
            let task = URLSession(configuration: .default, delegate: delegate, delegateQueue: queue)
                .webSocketTask(with: Self.wsURL(server, "/web-socket"))
            task.resume()
            let sent: (any Error)? = await withCheckedContinuation { continuation in
                task.send(.string("Hello")) { error in
                    #expect(OperationQueue.current === queue)
                    continuation.resume(returning: error)
                }
            }
            #expect(sent == nil)
            let received = await withCheckedContinuation { continuation in
                task.receive { result in continuation.resume(returning: result) }
            }
            guard case .success(.string(let text)) = received else { throw TestFailure("\(received)") }
            #expect(text == "Hello")
            let pong: (any Error)? = await withCheckedContinuation { continuation in
                task.sendPing { error in continuation.resume(returning: error) }
            }
            #expect(pong == nil)
            await delegate.completed.wait()
            let afterClose = await withCheckedContinuation { continuation in
                task.receive { result in continuation.resume(returning: result) }
            }
            guard case .failure(let error as URLError) = afterClose else { throw TestFailure("\(afterClose)") }
            #expect(error.code == .networkConnectionLost)
            #expect(delegate.calls == ["didOpenWithProtocol", "didCloseWith", "didCompleteWithError"])
        }
    }

    @Test func sharedSession_exchangesMessages() async throws {
        let script: [FaultServer.Step] = [
            .readRequest, Self.switching(),
            .expectFrame(opcode: 1, payload: Array("Hello".utf8)), .sendFrame(opcode: 1, payload: Array("Hello".utf8)),
            .hold,
        ]
        try await withFaultServer([script]) { server in
            let task = URLSession.shared.webSocketTask(with: Self.wsURL(server, "/web-socket"))
            task.resume()
            try await task.send(.string("Hello"))
            guard case .string(let text) = try await task.receive() else { throw TestFailure("not a string") }
            #expect(text == "Hello")
            task.cancel()
        }
    }

    @Test func offeredProtocols_areSent_andTheChosenOneReported() async throws {
        let script: [FaultServer.Step] = [
            .readRequest, Self.switching(protocol: "chatbot"),
            .sendFrame(opcode: 9, payload: Array("Hi".utf8)), .expectFrame(opcode: 10, payload: Array("Hi".utf8)),
            .expectFrame(opcode: 8, payload: Self.closePayload),
        ]
        try await withFaultServer([script]) { server in
            let delegate = WebSocketRecorder()
            let task = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
                .webSocketTask(with: Self.wsURL(server, "/web-socket/chatbot"), protocols: ["chatbot", "IRC", "BulletinBoard"])
            task.resume()
            // Open first (a fixed pause lost the race on a loaded machine).
            await delegate.opened.wait()
            task.cancel(with: .normalClosure, reason: Data("BuhBye".utf8))
            await delegate.completed.wait()
            #expect(delegate.calls == ["didOpenWithProtocol", "didCloseWith", "didCompleteWithError"])
            #expect(delegate.chosenProtocol == .some("chatbot"))
            #expect(task.closeCode == .normalClosure)
            #expect(task.closeReason == Data("BuhBye".utf8))
            #expect(server.requests.first?.contains("Sec-WebSocket-Protocol: chatbot, IRC, BulletinBoard") == true)
            #expect(server.scriptFailures.isEmpty)
        }
    }

    @Test func serverClosingBeforeTheHandshake_failsWithBadServerResponse() async throws {
        try await withFaultServer([[.readRequest, .close]]) { server in
            let delegate = WebSocketRecorder()
            let task = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
                .webSocketTask(with: Self.wsURL(server, "/web-socket/abrupt-close"))
            task.resume()
            let error = await #expect(throws: URLError.self) { _ = try await task.receive() }
            #expect(error?.code == .badServerResponse)
            await delegate.completed.wait()
            let again = await #expect(throws: URLError.self) { _ = try await task.receive() }
            #expect(again?.code == .badServerResponse)
            #expect(delegate.calls == ["didCompleteWithError"])
            #expect((delegate.completionError as? URLError)?.code == .badServerResponse)
            #expect(task.closeCode == .invalid)
            #expect(task.closeReason == nil)
        }
    }

    @Test func serverDroppingAfterOpening_closesAsFoundationNetworkingDoes() async throws {
        let script: [FaultServer.Step] = [
            .readRequest, Self.switching(),
            .sendFrame(opcode: 9, payload: Array("Hi".utf8)), .expectFrame(opcode: 10, payload: Array("Hi".utf8)),
        ]
        try await withFaultServer([script]) { server in
            let delegate = WebSocketRecorder()
            let task = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
                .webSocketTask(with: Self.wsURL(server, "/web-socket/semi-abrupt-close"))
            task.resume()
            let error = await #expect(throws: URLError.self) { _ = try await task.receive() }
            #expect(error?.code == .networkConnectionLost)
            await delegate.completed.wait()
            #expect(delegate.calls == ["didOpenWithProtocol", "didCloseWith", "didCompleteWithError"])
            #expect(task.closeCode == .normalClosure)
            #expect(task.closeReason == nil)
        }
    }

    @Test func wrongAcceptField_isStillRefused() async throws {
        let script: [FaultServer.Step] = [
            .readRequest,
            .send("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: c3Bvb2ZlZA==\r\n\r\n"),
            .hold,
        ]
        try await withFaultServer([script]) { server in
            let delegate = WebSocketRecorder()
            let task = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
                .webSocketTask(with: Self.wsURL(server, "/"))
            task.resume()
            let error = await #expect(throws: URLError.self) { _ = try await task.receive() }
            #expect(error?.localizedDescription.contains("Sec-WebSocket-Accept") == true)
            await delegate.completed.wait()
            #expect(delegate.calls == ["didCompleteWithError"])
        }
    }

    /// `send` returns once a message is queued, but what waits to be
    /// written stays bounded: against a server that reads nothing, sends
    /// stop returning once the socket's buffers and ours are full.
    @Test func sendsToAServerThatDoesNotRead_areHeldBack() async throws {
        try await withFaultServer([[.readRequest, Self.switching(), .pause(milliseconds: 4000)]]) { server in
            let task = URLSession(configuration: .default).webSocketTask(with: Self.wsURL(server, "/"))
            task.resume()
            let sent = Mutex(0)
            let sender = Task {
                let message = Data(count: 65536)
                for _ in 0..<1000 {
                    try await task.send(.data(message))
                    sent.withLock { $0 += 1 }
                }
            }
            try await Task.sleep(for: .seconds(1))
            // 1000 messages are 64 MiB; the loopback socket holds a few MiB.
            #expect(sent.withLock { $0 } < 500)
            task.cancel()
            sender.cancel()
            _ = await sender.result
        }
    }

    @Test func cancelBeforeResume_completesWithCancelled() async throws {
        let delegate = WebSocketRecorder()
        let task = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
            .webSocketTask(with: URL(string: "ws://127.0.0.1:9/never")!)
        #expect(task.state == .suspended)
        task.cancel()
        try await withTimeLimit { await delegate.completed.wait() }
        #expect((delegate.completionError as? URLError)?.code == .cancelled)
        #expect(delegate.calls == ["didCompleteWithError"])
        #expect(task.state == .completed)
    }

    @Test func loopbackEcho_withTaskDelegate_andGetAllTasks() async throws {
        try await withServer { server in
            let session = URLSession(configuration: .default)
            let task = session.webSocketTask(with: URL(string: "ws://127.0.0.1:\(server.port)/ws/echo")!, protocols: ["chat"])
            let delegate = WebSocketRecorder()
            task.delegate = delegate
            task.resume()
            #expect(task.state == .running)
            try await task.send(.data(Data(repeating: 7, count: 70_000)))
            guard case .data(let echoed) = try await task.receive() else { throw TestFailure("not data") }
            #expect(echoed == Data(repeating: 7, count: 70_000))
            #expect((task.response as? HTTPURLResponse)?.statusCode == 101)
            #expect(task.countOfBytesReceived > 70_000)
            let listed = await withCheckedContinuation { continuation in
                session.getAllTasks { continuation.resume(returning: $0) }
            }
            #expect(listed.contains { $0 === task })
            task.cancel(with: .normalClosure, reason: nil)
            await delegate.completed.wait()
            #expect(delegate.calls == ["didOpenWithProtocol", "didCloseWith", "didCompleteWithError"])
            #expect(delegate.chosenProtocol == .some("chat"))
            session.finishTasksAndInvalidate()
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
