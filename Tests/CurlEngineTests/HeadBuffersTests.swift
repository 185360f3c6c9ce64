import Testing

@testable import CurlEngine

/// The header buffers an easy handle keeps between its transfers.
@Suite struct HeadBuffersTests {
    /// One transfer on a handle: a parser made from the handle's buffers
    /// reads `lines`, and the buffers go back to the handle.
    private func transfer(_ buffers: inout HeadBuffers, _ lines: [String]) -> ResponseHead? {
        var parser = ResponseHeadParser(buffers: buffers)
        var head: ResponseHead?
        for line in lines {
            var bytes = Array(line.utf8)
            if let made = bytes.withUnsafeMutableBytes({ parser.consume(UnsafeRawBufferPointer($0)) }) { head = made }
        }
        buffers = parser.takeBuffers()
        return head
    }

    private let headA = ["HTTP/1.1 200 OK\r\n", "Content-Length: 5\r\n", "ETag: \"a\"\r\n", "\r\n"]
    private let headB = ["HTTP/1.1 200 OK\r\n", "Content-Length: 50\r\n", "ETag: \"bb\"\r\n", "\r\n"]

    @Test func repeatedHead_isHandedOutInTheLastHeadsBuffers() throws {
        var buffers = HeadBuffers()
        let first = try #require(transfer(&buffers, headA))
        let second = try #require(transfer(&buffers, headA))
        #expect(second.fields.sharesBuffers(with: first.fields))
        #expect(second.fields == first.fields)
    }

    @Test func differentHead_getsItsOwnBuffers_andEarlierHeadsStayIntact() throws {
        var buffers = HeadBuffers()
        let first = try #require(transfer(&buffers, headA))
        let second = try #require(transfer(&buffers, headB))
        #expect(!second.fields.sharesBuffers(with: first.fields))
        #expect(first.fields.value(named: "content-length") == "5")
        #expect(first.fields.value(named: "etag") == "\"a\"")
        #expect(second.fields.value(named: "content-length") == "50")
        #expect(second.fields.value(named: "etag") == "\"bb\"")
        // The handle now remembers B.
        let third = try #require(transfer(&buffers, headB))
        #expect(third.fields.sharesBuffers(with: second.fields))
    }

    @Test func largeHead_isNotKept() throws {
        var buffers = HeadBuffers()
        let big = ["HTTP/1.1 200 OK\r\n", "X-Big: " + String(repeating: "x", count: HeadBuffers.keptByteLimit) + "\r\n", "\r\n"]
        let first = try #require(transfer(&buffers, big))
        let second = try #require(transfer(&buffers, big))
        #expect(!second.fields.sharesBuffers(with: first.fields))
        #expect(second.fields == first.fields)
    }

    /// Interim heads and a redirect's head parsed on one handle never leak
    /// into the final head's fields.
    @Test func interimHead_thenFinalHead_onReusedBuffers() throws {
        var buffers = HeadBuffers()
        _ = try #require(transfer(&buffers, headB))
        let head = try #require(transfer(&buffers, ["HTTP/1.1 100 Continue\r\n", "X-Interim: 1\r\n", "\r\n"] + headA))
        #expect(head.fields.map(\.name) == ["Content-Length", "ETag"])
    }
}
