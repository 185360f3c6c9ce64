import Foundation
import LoopbackServer
import Testing

@testable import AsyncURLSession

/// `lines`, `characters` and `unicodeScalars` of a body: the splitting
/// rules on their own, then end to end over chunks a server really sends.
@Suite struct TextSequenceTests {
    /// Feeds `text` to a splitter in chunks of `size` bytes.
    private func lines(_ bytes: [UInt8], chunk size: Int) -> [String] {
        var splitter = LineSplitter()
        var lines: [String] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + size)
            lines += splitter.feed(bytes[start..<end])
            start = end
        }
        if let last = splitter.finish() { lines.append(last) }
        return lines
    }

    @Test(arguments: [1, 2, 3, 64])
    func lineSplitter_followsApplesSeparators_whateverTheChunking(chunk: Int) {
        let text = "a\nb\r\nc\rd\u{85}e\u{2028}f\u{2029}g\n\n\r\nh"
        #expect(lines(Array(text.utf8), chunk: chunk) == ["a", "b", "c", "d", "e", "f", "g", "h"])
    }

    @Test func lineSplitter_keepsNonSeparatorsThatShareALeadByte() {
        // é (C3 A9) is no separator; ¢ (C2 A2) shares NEL's lead byte; – (E2 80 93) shares U+2028's first two.
        #expect(lines(Array("é¢–\n".utf8), chunk: 1) == ["é¢–"])
        #expect(lines(Array("x\r".utf8), chunk: 1) == ["x"])
        #expect(lines(Array("\r\u{85}y".utf8), chunk: 1) == ["y"])
    }

    @Test func utf8Decoder_holdsASplitCharacterUntilItsLastByte() {
        var decoder = UTF8ChunkDecoder()
        let bytes = Array("€😀".utf8)  // E2 82 AC, F0 9F 98 80
        #expect(decoder.decode(bytes[0..<1]) == "")
        #expect(decoder.decode(bytes[1..<4]) == "€")
        #expect(decoder.decode(bytes[4..<6]) == "")
        #expect(decoder.decode(bytes[6..<7]) == "😀")
        #expect(decoder.finish() == "")
    }

    @Test func utf8Decoder_turnsAnUnfinishedEndAndInvalidBytesIntoReplacements() {
        var decoder = UTF8ChunkDecoder()
        #expect(decoder.decode([0x61, 0xFF, 0x62]) == "a\u{FFFD}b")
        #expect(decoder.decode([0xE2, 0x82]) == "")
        #expect(decoder.finish() == "\u{FFFD}")
    }

    /// A body of many lines, large enough to arrive in many chunks.
    private static let manyLines = (0..<20_000).map { "line \($0) ✓ é" }

    private func echo(_ text: String, from server: LoopbackServer) async throws -> AsyncBytes {
        var request = URLRequest(url: server.url("/echo-body"))
        request.httpMethod = "POST"
        request.httpBody = Data(text.utf8)
        let session = Session(configuration: testConfiguration())
        return try await session.bytes(for: request).0
    }

    @Test func lines_ofABodyInManyChunks_areEveryLine() async throws {
        try await withServer { server in
            let bytes = try await echo(Self.manyLines.joined(separator: "\r\n") + "\n", from: server)
            var received: [String] = []
            for try await line in bytes.lines { received.append(line) }
            #expect(received == Self.manyLines)
        }
    }

    @Test func characters_andScalars_ofABodyInManyChunks_matchTheText() async throws {
        try await withServer { server in
            let text = String(repeating: "e\u{301}🇫🇷a€", count: 40_000)
            var characters: [Character] = []
            for try await character in try await echo(text, from: server).characters { characters.append(character) }
            #expect(String(characters) == text)
            #expect(characters.count == text.count)
            var scalars = String.UnicodeScalarView()
            for try await scalar in try await echo(text, from: server).unicodeScalars { scalars.append(scalar) }
            #expect(String(scalars) == text)
        }
    }

    @Test func breakOutOfLines_cancelsTheTask() async throws {
        try await withServer { server in
            let bytes = try await echo(Self.manyLines.joined(separator: "\n"), from: server)
            for try await line in bytes.lines where line == "line 3 ✓ é" { break }
            try await eventually { bytes.task.state == .completed }
            #expect(bytes.task.state == .completed)
        }
    }
}
