import Foundation
import Testing

@testable import AsyncURLSession

/// `WebSocketState` as a table of transitions, without a connection.
@Suite struct WebSocketStateTests {
    static func read(_ text: String, into state: inout WebSocketState) -> WebSocketState.HandshakeRead {
        Data(text.utf8).withUnsafeBytes { state.readHandshake($0) }
    }

    @Test func theHandshakeHead_isWholeAtItsBlankLine_andWhatFollowsIsKept() {
        var state = WebSocketState()
        guard case .incomplete(tooLarge: false) = Self.read("HTTP/1.1 101 Switching\r\nUpgrade: websocket\r\n", into: &state)
        else {
            Issue.record("half a head is not whole")
            return
        }
        let end = Data("\r\n".utf8) + Data([0x81, 0x02, 0x68, 0x69])
        guard case .complete(let head, let rest) = end.withUnsafeBytes({ state.readHandshake($0) }) else {
            Issue.record("the blank line ends the head")
            return
        }
        #expect(String(decoding: head, as: UTF8.self) == "HTTP/1.1 101 Switching\r\nUpgrade: websocket")
        #expect(rest == Data([0x81, 0x02, 0x68, 0x69]))
    }

    @Test func aHandshakeHead_pastTheLimit_isTooLarge() {
        var state = WebSocketState()
        let line = "X-Padding: " + String(repeating: "a", count: WebSocketState.maximumHeadSize) + "\r\n"
        guard case .incomplete(tooLarge: true) = Self.read(line, into: &state) else {
            Issue.record("a head past the limit is refused")
            return
        }
    }

    @Test func framesAfterTheHandshake_makeMessages_thatWaitForReceive() throws {
        var state = WebSocketState()
        state.prepareForConnection()
        state.appendFrames(Data([0x81, 0x02, 0x68, 0x69]))  // text "hi"
        guard case .text(let text)? = try state.nextIncoming() else {
            Issue.record("a text frame makes a message")
            return
        }
        #expect(text == "hi")
        let next = try state.nextIncoming()
        #expect(next == nil)
        let receiver = state.deliver(.string(text))
        #expect(receiver == nil)  // nobody waits: it is kept
        #expect(state.receivedBytes == 2)
        let taken = state.takeMessage()
        #expect(state.receivedBytes == 0)
        guard case .string("hi")? = taken else {
            Issue.record("the kept message is taken")
            return
        }
    }

    @Test func theFirstCloseCode_stays() {
        var state = WebSocketState()
        state.recordClose(code: .normalClosure, reason: Data("bye".utf8))
        state.recordClose(code: .goingAway, reason: nil)
        #expect(state.closeCode == .normalClosure)
        #expect(state.closeReason == Data("bye".utf8))
    }

    @Test func theMessageSizeLimit_isAtLeastOne() {
        var state = WebSocketState()
        state.setMaximumMessageSize(0)
        #expect(state.maximumMessageSize == 1)
    }
}
