import Foundation
import Testing

@testable import AsyncURLSession

/// RFC 6455 framing, table-driven in the manner of the Autobahn suite's
/// framing, fragmentation, UTF-8 and close-code cases.
@Suite struct WebSocketFramingTests {
    /// A server frame (unmasked) as bytes.
    private static func serverFrame(
        fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, payload: [UInt8], masked: Bool = false
    ) -> Data {
        var out = Data([(fin ? 0x80 : 0) | (rsv << 4) | opcode])
        let count = payload.count
        let maskBit: UInt8 = masked ? 0x80 : 0
        if count < 126 {
            out.append(maskBit | UInt8(count))
        } else if count <= 0xFFFF {
            out.append(contentsOf: [maskBit | 126, UInt8(count >> 8), UInt8(count & 0xFF)])
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((count >> shift) & 0xFF)) }
        }
        if masked { out.append(contentsOf: [0, 0, 0, 0]) }
        out.append(contentsOf: payload)
        return out
    }

    /// Everything `bytes` yields, fed in pieces of `chunk` bytes.
    private static func incoming(
        _ bytes: Data, chunk: Int = .max, maximum: Int = 1 << 20
    ) -> (messages: [WebSocketIncoming], error: WebSocketProtocolError?) {
        var parser = WebSocketFrameParser(maximumFrameSize: maximum)
        var assembler = WebSocketMessageAssembler(maximumMessageSize: maximum)
        var messages: [WebSocketIncoming] = []
        var offset = 0
        do {
            while offset < bytes.count {
                let end = min(bytes.count, offset + chunk)
                parser.append(bytes.subdata(in: offset..<end))
                offset = end
                while let frame = try parser.next() {
                    if let message = try assembler.receive(frame) { messages.append(message) }
                }
            }
        } catch {
            return (messages, error)
        }
        return (messages, nil)
    }

    // MARK: - Framing (Autobahn 1.x, 2.x)

    @Test(arguments: [0, 125, 126, 127, 128, 65535, 65536])
    func binaryOfEveryLengthClass_arrivesWhole(_ length: Int) {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
        for chunk in [1, 7, Int.max] where length < 70_000 || chunk == .max {
            let result = Self.incoming(Self.serverFrame(opcode: 2, payload: payload), chunk: chunk)
            #expect(result.error == nil)
            #expect(result.messages == [.binary(Data(payload))])
        }
    }

    @Test func pingAndPong_areControlEvents() {
        let bytes = Self.serverFrame(opcode: 9, payload: Array("hi".utf8)) + Self.serverFrame(opcode: 10, payload: [])
        #expect(Self.incoming(bytes).messages == [.ping(Data("hi".utf8)), .pong(Data())])
    }

    @Test(arguments: [
        (Data([0x81, 0x80, 0, 0, 0, 0]), "masked"),
        (Data([0x91, 0x00]), "reserved"),
        (Data([0x83, 0x00]), "unknown opcode"),
        (Data([0x09, 0x00]), "fragmented control"),
        (Data([0x89, 126, 0, 126] + [UInt8](repeating: 0, count: 126)), "longer than 125"),
        (Data([0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0]), "most significant bit"),
    ] as [(Data, String)])
    func brokenFrames_areProtocolErrors(_ bytes: Data, _ words: String) {
        let error = Self.incoming(bytes).error
        #expect(error?.closeCode == 1002)
        #expect(error?.reason.contains(words) == true, "\(String(describing: error))")
    }

    // MARK: - Fragmentation (Autobahn 5.x)

    @Test func fragments_joinIntoOneMessage_withControlFramesBetween() {
        let bytes = Self.serverFrame(fin: false, opcode: 1, payload: Array("Hel".utf8))
            + Self.serverFrame(opcode: 9, payload: [1])
            + Self.serverFrame(fin: false, opcode: 0, payload: Array("lo, ".utf8))
            + Self.serverFrame(opcode: 0, payload: Array("world".utf8))
        let result = Self.incoming(bytes, chunk: 3)
        #expect(result.error == nil)
        #expect(result.messages == [.ping(Data([1])), .text("Hello, world")])
    }

    @Test func continuationWithoutAStart_isAnError() {
        #expect(Self.incoming(Self.serverFrame(opcode: 0, payload: [1])).error?.closeCode == 1002)
    }

    @Test func newMessageInsideAFragmentedOne_isAnError() {
        let bytes = Self.serverFrame(fin: false, opcode: 1, payload: [0x41]) + Self.serverFrame(opcode: 2, payload: [1])
        #expect(Self.incoming(bytes).error?.closeCode == 1002)
    }

    // MARK: - Sizes

    @Test func frameOverTheMaximum_is1009() {
        let result = Self.incoming(Self.serverFrame(opcode: 2, payload: [UInt8](repeating: 0, count: 200)), maximum: 100)
        #expect(result.error?.closeCode == 1009)
    }

    @Test func fragmentsOverTheMaximum_are1009() {
        let bytes = Self.serverFrame(fin: false, opcode: 2, payload: [UInt8](repeating: 0, count: 60))
            + Self.serverFrame(opcode: 0, payload: [UInt8](repeating: 0, count: 60))
        #expect(Self.incoming(bytes, maximum: 100).error?.closeCode == 1009)
    }

    // MARK: - UTF-8 (Autobahn 6.x)

    @Test(arguments: [
        [0xC0, 0xAF],  // overlong "/"
        [0xED, 0xA0, 0x80],  // a surrogate
        [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
        [0xCE, 0xBA, 0xE1],  // truncated at the end
    ] as [[UInt8]])
    func invalidUTF8Text_is1007(_ bytes: [UInt8]) {
        #expect(Self.incoming(Self.serverFrame(opcode: 1, payload: bytes)).error?.closeCode == 1007)
    }

    @Test func validMultibyteText_splitAcrossFragments_isKept() {
        let text = Array("κόσμε 🌍".utf8)
        let bytes = Self.serverFrame(fin: false, opcode: 1, payload: Array(text[..<3]))
            + Self.serverFrame(opcode: 0, payload: Array(text[3...]))
        #expect(Self.incoming(bytes, chunk: 1).messages == [.text("κόσμε 🌍")])
    }

    // MARK: - Close (Autobahn 7.x)

    @Test(arguments: [1000, 1001, 1003, 1007, 1011, 3000, 4999] as [UInt16])
    func validCloseCodes_arriveWithTheirReason(_ code: UInt16) {
        let payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array("bye".utf8)
        #expect(Self.incoming(Self.serverFrame(opcode: 8, payload: payload)).messages == [
            .close(code: code, reason: Data("bye".utf8))
        ])
    }

    @Test(arguments: [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000] as [UInt16])
    func invalidCloseCodes_are1002(_ code: UInt16) {
        let payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
        #expect(Self.incoming(Self.serverFrame(opcode: 8, payload: payload)).error?.closeCode == 1002)
    }

    @Test func closeWithoutACode_andOneByteClose() {
        #expect(Self.incoming(Self.serverFrame(opcode: 8, payload: [])).messages == [.close(code: nil, reason: Data())])
        #expect(Self.incoming(Self.serverFrame(opcode: 8, payload: [3])).error?.closeCode == 1002)
    }

    @Test func closeReasonNotUTF8_is1007() {
        #expect(Self.incoming(Self.serverFrame(opcode: 8, payload: [0x03, 0xE8, 0xFF])).error?.closeCode == 1007)
    }

    // MARK: - Encoding

    @Test(arguments: [0, 125, 126, 65535, 65536])
    func clientFrames_areMasked_andDecodeBack(_ length: Int) {
        let payload = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let encoded = WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .binary, payload: payload), maskingKey: 0x1234_5678)
        #expect(encoded[1] & 0x80 != 0)
        // Unmask as a server would, then parse the frame as unmasked.
        var bytes = Array(encoded)
        let header = length < 126 ? 2 : length <= 0xFFFF ? 4 : 10
        let key = Array(bytes[header..<(header + 4)])
        bytes[1] &= 0x7F
        var unmasked = Array(bytes[..<header])
        unmasked.append(contentsOf: bytes[(header + 4)...].enumerated().map { $0.element ^ key[$0.offset & 3] })
        #expect(Self.incoming(Data(unmasked), maximum: 1 << 20).messages == [.binary(payload)])
    }

    @Test func closePayload_isCutToAControlFrame() {
        let payload = WebSocketFrameEncoder.closePayload(code: 1000, reason: Data(repeating: 0x61, count: 300))
        #expect(payload.count == 125)
        #expect(payload.prefix(2) == Data([0x03, 0xE8]))
    }

    // MARK: - Handshake

    @Test func acceptValue_matchesTheRFCsExample() {
        // RFC 6455 §1.3.
        #expect(WebSocketHandshake.accept(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func handshake_acceptsAGoodAnswer_andReportsTheProtocol() throws {
        let handshake = WebSocketHandshake(protocols: ["chat", "superchat"], key: "dGhlIHNhbXBsZSBub25jZQ==")
        let fields = [
            "upgrade": "websocket", "connection": "Upgrade", "sec-websocket-accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
            "sec-websocket-protocol": "chat",
        ]
        #expect(try handshake.validate(status: 101) { fields[$0.lowercased()] } == "chat")
    }

    @Test func handshake_refusesWhatIsNotAWebSocketServer() {
        let handshake = WebSocketHandshake(protocols: ["chat"], key: "dGhlIHNhbXBsZSBub25jZQ==")
        let good = ["upgrade": "websocket", "connection": "upgrade", "sec-websocket-accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="]
        #expect(throws: WebSocketHandshake.Failure.notUpgraded(status: 200)) {
            _ = try handshake.validate(status: 200) { good[$0.lowercased()] }
        }
        var wrong = good
        wrong["sec-websocket-accept"] = "AAAA"
        #expect(throws: WebSocketHandshake.Failure.wrongAccept) {
            _ = try handshake.validate(status: 101) { wrong[$0.lowercased()] }
        }
        var other = good
        other["sec-websocket-protocol"] = "other"
        #expect(throws: WebSocketHandshake.Failure.unofferedProtocol("other")) {
            _ = try handshake.validate(status: 101) { other[$0.lowercased()] }
        }
        var noUpgrade = good
        noUpgrade["upgrade"] = nil
        #expect(throws: WebSocketHandshake.Failure.missingUpgrade) {
            _ = try handshake.validate(status: 101) { noUpgrade[$0.lowercased()] }
        }
    }
}
