import Testing

@testable import CurlEngine

/// The fields a head keeps as bytes: lookups, decoding and the byte
/// equality ResponseInterning relies on.
@Suite struct ResponseHeaderFieldsTests {
    /// Parses one head from raw lines (each ends with CRLF here).
    private func head(_ lines: [[UInt8]]) -> ResponseHead? {
        var parser = ResponseHeadParser()
        var head: ResponseHead?
        for line in [Array("HTTP/1.1 200 OK".utf8)] + lines + [[]] {
            var bytes = line + [0x0D, 0x0A]
            if let found = bytes.withUnsafeMutableBytes({ parser.consume(UnsafeRawBufferPointer($0)) }) { head = found }
        }
        return head
    }

    private func head(_ lines: [String]) -> ResponseHead? {
        head(lines.map { Array($0.utf8) })
    }

    @Test func lookup_ignoresASCIICase() throws {
        let fields = try #require(head(["Content-Type: text/plain", "X-Multi: 1", "Server: s", "x-MULTI: 2"])).fields
        #expect(fields.value(named: "content-type") == "text/plain")
        #expect(fields.value(named: "X-MULTI") == "1, 2", "repeated fields join in order")
        #expect(fields.count(named: "x-multi") == 2)
        #expect(fields.count(named: "Content-Type") == 1)
        #expect(fields.value(named: "X-Mult") == nil)
        #expect(fields.value(named: "Missing") == nil)
        #expect(fields.count(named: "Content_Type") == 0, "only letters fold")
        #expect(fields.firstIndex(sameNameAs: 3) == 1)
        #expect(fields.firstIndex(sameNameAs: 2) == 2)
    }

    @Test func nonASCIIName_isComparedAsDecodedText() throws {
        // "X-é" sent as ISO-8859-1: found by its decoded spelling, as before.
        let fields = try #require(head([Array("X-".utf8) + [0xE9] + Array(": 1".utf8), Array("x-é: 2".utf8)])).fields
        #expect(fields.name(at: 0) == "X-é")
        #expect(fields.value(named: "x-É") == nil, "non-ASCII letters do not fold")
        #expect(fields.value(named: "x-é") == "1, 2")
        #expect(fields.firstIndex(sameNameAs: 1) == 0)
    }

    @Test func foldedLines_joinTheLastValue() throws {
        let fields = try #require(head(["X-Long: one", "\t two ", "   three", "X-Next: n", " more"])).fields
        #expect(fields.count == 2)
        #expect(fields.value(named: "x-long") == "one two three")
        #expect(fields[1].name == "X-Next")
        #expect(fields[1].value == "n more")
    }

    @Test func foldedLines_areDecodedLineByLine() throws {
        // UTF-8 "é" then a continuation in ISO-8859-1: each line keeps its
        // own reading, as when every line became a String as it came.
        let fields = try #require(head([Array("X-F: é".utf8), [0x20, 0xE9], Array(" x".utf8)])).fields
        #expect(fields.value(at: 0) == "é é x")
    }

    @Test func values_decodeAsUTF8OrElseLatin1() throws {
        let fields = try #require(
            head([Array("X-UTF8: naïve ☃".utf8), Array("X-Latin1: caf".utf8) + [0xE9], Array("X-ASCII: plain".utf8)])
        ).fields
        #expect(fields.value(named: "x-utf8") == "naïve ☃")
        #expect(fields.value(named: "x-latin1") == "café")
        #expect(fields.map(\.value) == ["naïve ☃", "café", "plain"])
    }

    @Test func textFields_matchParsedOnes() throws {
        let parsed = try #require(head(["Server: s", "X-Empty:", "Date: d"])).fields
        let pairs = [(name: "Server", value: "s"), (name: "X-Empty", value: ""), (name: "Date", value: "d")]
        #expect(parsed == ResponseHeaderFields(pairs))
    }

    @Test func equality_isByteForByte() throws {
        let lines = ["Server: nginx", "Date: Sun, 22 Nov 2026 04:56:54 GMT", "Content-Length: 1024"]
        let first = try #require(head(lines)).fields
        #expect(first == (try #require(head(lines)).fields))
        #expect(first.byteCount == "ServernginxDateSun, 22 Nov 2026 04:56:54 GMTContent-Length1024".utf8.count)

        var later = lines
        later[1] = "Date: Sun, 22 Nov 2026 04:56:55 GMT"
        #expect(first != (try #require(head(later)).fields), "one byte of a value differs")

        #expect(first != (try #require(head([lines[1], lines[0], lines[2]])).fields), "same fields, another order")
        #expect(first != (try #require(head(lines.map { $0.lowercased() })).fields), "names differ in case")
        // The same bytes split differently are different fields.
        #expect(try #require(head(["Date: x"])).fields != (try #require(head(["Dat: ex"])).fields))
    }
}
