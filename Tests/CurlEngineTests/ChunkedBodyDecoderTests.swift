import Testing

@testable import CurlEngine

/// The engine's own chunked decoder (full duplex), as a table: what each
/// input gives, fed whole and fed a byte at a time.
@Suite struct ChunkedBodyDecoderTests {
    private func decode(_ text: String, byteAtATime: Bool) -> (data: String, state: ChunkedBodyDecoder.State, trailers: [String]) {
        var decoder = ChunkedBodyDecoder()
        var data: [UInt8] = []
        let bytes = Array(text.utf8)
        let pieces: [[UInt8]] = byteAtATime ? bytes.map { [$0] } : [bytes]
        var state = decoder.state
        for piece in pieces {
            state = piece.withUnsafeBytes { decoder.decode($0) { data.append(contentsOf: $0) } }
        }
        return (String(decoding: data, as: UTF8.self), state, decoder.trailerLines.map { String(decoding: $0, as: UTF8.self) })
    }

    @Test(arguments: [false, true])
    func chunksAndTheLastChunk_giveTheDataAndTheEnd(byteAtATime: Bool) {
        let result = decode("5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n", byteAtATime: byteAtATime)
        #expect(result.data == "hello world")
        #expect(result.state == .ended)
        #expect(result.trailers.isEmpty)
    }

    @Test(arguments: [false, true])
    func trailers_areKept(byteAtATime: Bool) {
        let result = decode("3\r\nabc\r\n0\r\nX-Sum: 42\r\nServer-Timing: a\r\n\r\n", byteAtATime: byteAtATime)
        #expect(result.data == "abc")
        #expect(result.state == .ended)
        #expect(result.trailers == ["X-Sum: 42", "Server-Timing: a"])
    }

    @Test func aBodyNotEndedYet_isNotEnded() {
        let result = decode("A\r\n0123456789\r\n4\r\nab", byteAtATime: false)
        #expect(result.data == "0123456789ab")
        #expect(result.state == .data(remaining: 2))
    }

    @Test func bytesThatAreNotChunks_areMalformed() {
        #expect(decode("zz\r\nhello\r\n", byteAtATime: false).state == .malformed)
        #expect(decode("3\r\nabcX\r\n", byteAtATime: false).state == .malformed)
        #expect(decode("FFFFFFFFFFFFFFFF\r\n", byteAtATime: false).state == .malformed)
    }
}
