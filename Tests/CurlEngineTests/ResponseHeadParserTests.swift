import Testing

@testable import CurlEngine

@Suite struct ResponseHeadParserTests {
    private func feed(_ parser: inout ResponseHeadParser, _ lines: [String]) -> [ResponseHead] {
        var heads: [ResponseHead] = []
        for line in lines {
            var bytes = Array(line.utf8)
            if let head = bytes.withUnsafeMutableBytes({ parser.consume(UnsafeRawBufferPointer($0)) }) {
                heads.append(head)
            }
        }
        return heads
    }

    @Test func differentContentLengths_inSeveralFields_areAFramingProblem() {
        var parser = ResponseHeadParser()
        let conflicting = feed(&parser, ["HTTP/1.1 200 OK\r\n", "Content-Length: 3\r\n", "Content-Length: 5\r\n", "\r\n"])
        #expect(conflicting.first?.framingProblem == .conflictingContentLengths)
        let equal = feed(&parser, ["HTTP/1.1 200 OK\r\n", "Content-Length: 5\r\n", "Content-Length: 5\r\n", "\r\n"])
        #expect(equal.first?.framingProblem == nil)
        #expect(equal.first?.contentLength == 5)
    }

    @Test func differentContentLengths_inOneField_areAFramingProblem() {
        var parser = ResponseHeadParser()
        let heads = feed(&parser, ["HTTP/1.1 200 OK\r\n", "Content-Length: 4, 10\r\n", "\r\n"])
        #expect(heads.first?.framingProblem == .conflictingContentLengths)
    }

    @Test func equalContentLengths_inOneField_areTakenAsOne() {
        var parser = ResponseHeadParser()
        let heads = feed(&parser, ["HTTP/1.1 200 OK\r\n", "Content-Length: 5 ,5,\t5\r\n", "\r\n"])
        #expect(heads.first?.framingProblem == nil)
        #expect(heads.first?.contentLength == 5)
        let repeated = feed(&parser, ["HTTP/1.1 200 OK\r\n", "Content-Length: 5, 5\r\n", "Content-Length: 6\r\n", "\r\n"])
        #expect(repeated.first?.framingProblem == .conflictingContentLengths)
    }

    @Test func contentLengthBesideTransferEncoding_isAFramingProblem_inEitherOrder() {
        var parser = ResponseHeadParser()
        let lengthFirst = feed(&parser, [
            "HTTP/1.1 200 OK\r\n", "Content-Length: 3\r\n", "Transfer-Encoding: chunked\r\n", "\r\n",
        ])
        #expect(lengthFirst.first?.framingProblem == .contentLengthWithTransferEncoding)
        let encodingFirst = feed(&parser, [
            "HTTP/1.1 200 OK\r\n", "Transfer-Encoding: chunked\r\n", "Content-Length: 3\r\n", "\r\n",
        ])
        #expect(encodingFirst.first?.framingProblem == .contentLengthWithTransferEncoding)
        let chunkedOnly = feed(&parser, ["HTTP/1.1 200 OK\r\n", "Transfer-Encoding: chunked\r\n", "\r\n"])
        #expect(chunkedOnly.first?.framingProblem == nil)
    }

    @Test func strictTransportSecurity_isFlagged_andTheFlagResetsForTheNextHead() {
        var parser = ResponseHeadParser()
        let first = feed(&parser, ["HTTP/1.1 200 OK\r\n", "strict-TRANSPORT-security: max-age=60\r\n", "\r\n"])
        #expect(first.first?.hasStrictTransportSecurity == true)
        let second = feed(&parser, ["HTTP/1.1 200 OK\r\n", "Content-Length: 0\r\n", "\r\n"])
        #expect(second.first?.hasStrictTransportSecurity == false)
    }

    @Test func finalHead_isReturnedAtTheBlankLine() {
        var parser = ResponseHeadParser()
        let heads = feed(&parser, ["HTTP/1.1 200 OK\r\n", "Content-Length: 5\r\n", "X-A:  spaced \r\n", "\r\n"])
        #expect(heads.count == 1)
        #expect(heads.first?.statusCode == 200)
        #expect(heads.first?.httpVersion == "HTTP/1.1")
        #expect(heads.first?.fields.map(\.name) == ["Content-Length", "X-A"])
        #expect(heads.first?.fields.last?.value == "spaced")
    }

    @Test func interimResponses_areInformationalHeads_beforeTheFinalOne() {
        var parser = ResponseHeadParser()
        let heads = feed(&parser, [
            "HTTP/1.1 100 Continue\r\n", "\r\n",
            "HTTP/1.1 103 Early Hints\r\n", "Link: </a>\r\n", "\r\n",
            "HTTP/1.1 201 Created\r\n", "\r\n",
        ])
        #expect(heads.map(\.statusCode) == [100, 103, 201])
        #expect(heads.map(\.isInformational) == [true, true, false])
        #expect(heads[1].fields.map(\.value) == ["</a>"])
        #expect(heads[2].fields.isEmpty)
    }

    @Test func switchingProtocols_isNoInformationalHead() {
        var parser = ResponseHeadParser()
        let heads = feed(&parser, ["HTTP/1.1 101 Switching Protocols\r\n", "Upgrade: websocket\r\n", "\r\n"])
        #expect(heads.isEmpty)
    }

    @Test func severalLinesInOneCall_areSplit() {
        // After a header pause libcurl hands every held-back line in one call.
        var parser = ResponseHeadParser()
        let heads = feed(&parser, ["HTTP/2 404 \r\nserver: x\r\ncontent-type: text/plain\r\n\r\n"])
        #expect(heads.first?.statusCode == 404)
        #expect(heads.first?.httpVersion == "HTTP/2")
        #expect(heads.first?.fields.count == 2)
    }

    @Test func foldedHeader_isUnfolded() {
        var parser = ResponseHeadParser()
        let heads = feed(&parser, ["HTTP/1.1 200 OK\r\n", "X-Long: one\r\n", "\t two\r\n", "\r\n"])
        #expect(heads.first?.fields.first?.value == "one two")
    }

    @Test func trailers_afterTheBody_makeNoHead_andAreKeptForTheEnd() throws {
        var parser = ResponseHeadParser()
        _ = feed(&parser, ["HTTP/1.1 200 OK\r\n", "\r\n"])
        // As libcurl hands them over: a line each, no blank line after.
        let heads = feed(&parser, ["X-Checksum: abc\r\n", "Server-Timing:  db;dur=53 \r\n"])
        #expect(heads.isEmpty)
        let taken = parser.takeTrailers()
        let trailers = try #require(taken)
        #expect(trailers.indices.map { "\(trailers.name(at: $0))=\(trailers.value(at: $0))" }
            == ["X-Checksum=abc", "Server-Timing=db;dur=53"])
        #expect(parser.takeTrailers() == nil)
    }

    @Test func linesBeforeAnyFinalHead_areNoTrailers() {
        var parser = ResponseHeadParser()
        _ = feed(&parser, ["X-Stray: 1\r\n"])
        _ = feed(&parser, ["HTTP/1.1 100 Continue\r\n", "\r\n", "X-Stray: 2\r\n"])
        #expect(parser.takeTrailers() == nil)
    }

    @Test func aNewResponseHead_dropsTheTrailersOfThePreviousOne() {
        var parser = ResponseHeadParser()
        _ = feed(&parser, ["HTTP/1.1 401 Unauthorized\r\n", "\r\n", "X-Old: 1\r\n"])
        _ = feed(&parser, ["HTTP/1.1 200 OK\r\n", "\r\n"])
        #expect(parser.takeTrailers() == nil)
    }

    @Test func nonUTF8Value_isReadAsLatin1() {
        var parser = ResponseHeadParser()
        var head: ResponseHead?
        for line: [UInt8] in [Array("HTTP/1.1 200 OK\r\n".utf8), Array("X-Name: caf".utf8) + [0xE9, 0x0D, 0x0A], [0x0D, 0x0A]] {
            var bytes = line
            if let found = bytes.withUnsafeMutableBytes({ parser.consume(UnsafeRawBufferPointer($0)) }) { head = found }
        }
        #expect(head?.fields.first?.value == "café")
    }

    @Test func multipartContentType_isFlaggedByItsFirstField() {
        var parser = ResponseHeadParser()
        let heads = feed(&parser, [
            "HTTP/1.1 200 OK\r\n", "content-TYPE: Multipart/x-mixed-replace; boundary=b\r\n", "\r\n",
            "HTTP/1.1 200 OK\r\n", "Content-Type: text/plain\r\n", "Content-Type: multipart/mixed\r\n", "\r\n",
            "HTTP/1.1 200 OK\r\n", "Content-Type: multipart\r\n", "\r\n",
        ])
        #expect(heads.map(\.contentTypeIsMultipart) == [true, false, false])
    }
}

@Suite struct ASCIICaseFoldingTests {
    @Test func equality_ignoresASCIICaseOnly() {
        #expect("Content-Length".equalsIgnoringASCIICase("content-LENGTH"))
        #expect(!"Content-Length".equalsIgnoringASCIICase("Content-Lengt"))
        #expect(!"a-b".equalsIgnoringASCIICase("a\rb"), "punctuation is not folded")
        #expect(!"@".equalsIgnoringASCIICase("`"), "only letters fold")
        #expect("HTTPS://x".hasPrefixIgnoringASCIICase("https:"))
        #expect(!"é".equalsIgnoringASCIICase("É"), "non-ASCII bytes are compared exactly")
        #expect("x-Long-Header-Name-Past-Small-String".equalsIgnoringASCIICase("X-LONG-HEADER-NAME-PAST-SMALL-STRING"))
        #expect("".equalsIgnoringASCIICase(""))
    }

    @Test func prefix_ignoresASCIICaseOnly() {
        #expect("HTTP://127.0.0.1:8080/a-long-path-past-the-small-string-size".hasPrefixIgnoringASCIICase("http:"))
        #expect(!"http".hasPrefixIgnoringASCIICase("http:"), "shorter than the prefix")
        #expect(!"httpx://h/".hasPrefixIgnoringASCIICase("http:"))
        #expect(!"h@tp:".hasPrefixIgnoringASCIICase("h`tp:"), "only letters fold")
        #expect("anything".hasPrefixIgnoringASCIICase(""))
    }

    @Test func parser_readsContentLengthAndEncoding() {
        var parser = ResponseHeadParser()
        var head: ResponseHead?
        for line in ["HTTP/1.1 200 OK\r\n", "content-length: 12\r\n", "Content-Encoding: gzip\r\n", "\r\n"] {
            var bytes = Array(line.utf8)
            if let found = bytes.withUnsafeMutableBytes({ parser.consume(UnsafeRawBufferPointer($0)) }) { head = found }
        }
        #expect(head?.contentLength == 12)
        #expect(head?.hasContentEncoding == true)
    }
}
