import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// `WebSocketTask` against the loopback server's /ws routes (NIOWebSocket
/// on the server side), over ws and wss.
@Suite struct WebSocketTaskTests {
    private func wsURL(_ server: LoopbackServer, _ path: String) -> URL {
        var components = URLComponents(url: server.url(path), resolvingAgainstBaseURL: false)!
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        return components.url!
    }

    @Test func textAndBinary_echo() async throws {
        try await withServer { server in
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wsURL(server, "/ws/echo"))
            socket.resume()
            try await socket.send(.string("hello"))
            let message1 = try await socket.receive()
            #expect(message1 == .string("hello"))
            let bytes = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0) })
            try await socket.send(.data(bytes))
            let message2 = try await socket.receive()
            #expect(message2 == .data(bytes))
            socket.cancel(with: .normalClosure, reason: nil)
        }
    }

    @Test func overTLS_echo() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let socket = Session(configuration: testConfiguration(trusting: server))
                .webSocketTask(with: wsURL(server, "/ws/echo"))
            socket.resume()
            try await socket.send(.string("secure"))
            let message3 = try await socket.receive()
            #expect(message3 == .string("secure"))
            socket.cancel()
        }
    }

    @Test func untrustedTLS_failsAsEveryConnectionDoes() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wsURL(server, "/ws/echo"))
            socket.resume()
            let error = await #expect(throws: URLError.self) { try await socket.send(.string("x")) }
            #expect(error?.code == .serverCertificateUntrusted)
        }
    }

    @Test func fragmentedMessage_isReassembled() async throws {
        try await withServer { server in
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wsURL(server, "/ws/echo?fragment=3"))
            socket.resume()
            let text = "fragments of a longer message ✓"
            try await socket.send(.string(text))
            let message4 = try await socket.receive()
            #expect(message4 == .string(text))
        }
    }

    @Test func subprotocol_isNegotiated() async throws {
        try await withServer { server in
            let socket = Session(configuration: testConfiguration())
                .webSocketTask(with: wsURL(server, "/ws/echo"), protocols: ["superchat", "chat"])
            socket.resume()
            try await socket.send(.string("hi"))
            _ = try await socket.receive()
            #expect(socket.negotiatedProtocol == "superchat")
        }
    }

    @Test func serverClose_endsMessages_withItsCodeAndReason() async throws {
        try await withServer { server in
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wsURL(server, "/ws/close/4001"))
            socket.resume()
            var count = 0
            for try await _ in socket.messages { count += 1 }
            #expect(count == 0)
            #expect(socket.closeCode.rawValue == 4001)
            #expect(socket.closeReason == Data("bye".utf8))
            await #expect(throws: URLError.self) { _ = try await socket.receive() }
        }
    }

    @Test func messageOverTheMaximum_closesWith1009() async throws {
        try await withServer { server in
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wsURL(server, "/ws/send/2000"))
            socket.maximumMessageSize = 1000
            socket.resume()
            let error = await #expect(throws: URLError.self) { _ = try await socket.receive() }
            #expect(error?.code == .badServerResponse)
            #expect(socket.closeCode == .messageTooBig)
        }
    }

    @Test func messageUnderTheMaximum_arrives() async throws {
        try await withServer { server in
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wsURL(server, "/ws/send/2000"))
            socket.resume()
            let message5 = try await socket.receive()
            #expect(message5 == .data(Data((0..<2000).map { UInt8(truncatingIfNeeded: $0) })))
        }
    }

    @Test func reservedBitFromTheServer_isAProtocolError() async throws {
        try await withServer { server in
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wsURL(server, "/ws/bad-frame"))
            socket.resume()
            let error = await #expect(throws: URLError.self) { _ = try await socket.receive() }
            #expect(error?.localizedDescription.contains("reserved") == true)
            #expect(socket.closeCode == .protocolError)
        }
    }

    @Test func clientFrames_areMasked() async throws {
        try await withServer { server in
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wsURL(server, "/ws/unmasked-check"))
            socket.resume()
            try await socket.send(.string("check"))
            let message6 = try await socket.receive()
            #expect(message6 == .string("masked"))
        }
    }

    @Test func ping_getsItsPong() async throws {
        try await withServer { server in
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wsURL(server, "/ws/echo"))
            socket.resume()
            try await socket.sendPing()
            try await socket.sendPing()
        }
    }

    @Test func droppedConnection_isAnAbnormalClosure() async throws {
        try await withServer { server in
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wsURL(server, "/ws/drop"))
            socket.resume()
            let error = await #expect(throws: URLError.self) { _ = try await socket.receive() }
            #expect(error?.code == .networkConnectionLost)
            #expect(socket.closeCode == .abnormalClosure)
        }
    }

    @Test func notAWebSocketServer_failsNamingTheStatus() async throws {
        // The loopback proxy answers an origin-form request with 400: an
        // HTTP server that is not a WebSocket server.
        let proxy = try await LoopbackProxy.start()
        defer { Task { try? await proxy.shutdown() } }
        let socket = Session(configuration: testConfiguration())
            .webSocketTask(with: URL(string: "ws://127.0.0.1:\(proxy.port)/chat")!)
        socket.resume()
        let error = await #expect(throws: URLError.self) { _ = try await socket.receive() }
        #expect(error?.code == .badServerResponse)
        #expect(error?.localizedDescription.contains("400") == true)
    }

    @Test func clientClose_isAnsweredAndEndsMessages() async throws {
        try await withServer { server in
            let socket = Session(configuration: testConfiguration()).webSocketTask(with: wsURL(server, "/ws/echo"))
            socket.resume()
            try await socket.send(.string("one"))
            let message7 = try await socket.receive()
            #expect(message7 == .string("one"))
            socket.cancel(with: .normalClosure, reason: Data("done".utf8))
            var rest = 0
            for try await _ in socket.messages { rest += 1 }
            #expect(rest == 0)
            #expect(socket.closeCode == .normalClosure)
        }
    }

    @Test func fetchCLI_sendsStandardInputLines_andPrintsMessages() async throws {
        let fetch = try fetchExecutablePath()
        try await withServer { server in
            let result = try await ChildProcess.run(
                fetch, ["-s", wsURL(server, "/ws/echo").absoluteString],
                input: Data("first line\nsecond line\n".utf8))
            let status = result.status
            let printed = result.outputText
            #expect(status == 0)
            #expect(printed == "first line\nsecond line\n")
        }
    }

    @Test func finishTasksAndInvalidate_letsAnOpenSocketRun_andItsSessionEndsAfter() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let socket = session.webSocketTask(with: wsURL(server, "/ws/echo"))
            socket.resume()
            try await socket.send(.string("before"))
            _ = try await socket.receive()
            session.finishTasksAndInvalidate()
            try await socket.send(.string("after"))
            let echoed = try await socket.receive()
            #expect(echoed == .string("after"))
            socket.cancel(with: .normalClosure, reason: nil)
            for try await _ in socket.messages {}
            let refused = session.webSocketTask(with: wsURL(server, "/ws/echo"))
            refused.resume()
            let error = await #expect(throws: URLError.self) { _ = try await refused.receive() }
            #expect(error?.code == .cancelled)
        }
    }

    @Test func invalidateAndCancel_closesOpenSockets() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let socket = session.webSocketTask(with: wsURL(server, "/ws/echo"))
            socket.resume()
            try await socket.sendPing()
            session.invalidateAndCancel()
            for try await _ in socket.messages {}
            #expect(socket.closeCode == .goingAway)
        }
    }

    @Test func badScheme_failsClearly() async throws {
        let socket = Session(configuration: testConfiguration()).webSocketTask(with: URL(string: "ftp://127.0.0.1/x")!)
        socket.resume()
        let error = await #expect(throws: URLError.self) { _ = try await socket.receive() }
        #expect(error?.code == .badURL)
    }
}
