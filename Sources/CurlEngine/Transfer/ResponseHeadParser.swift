import Glibc

/// Collects the header lines libcurl hands to the header callback into a
/// `ResponseHead`, one header block at a time.
///
/// libcurl calls the header callback once per line for every block it reads:
/// 1xx interim responses, the final response, and trailers after the body.
/// A block that starts with a status line is a response head: a final one,
/// or an informational one (1xx other than 101, whose protocol switch libcurl
/// handles), which a final one follows. Lines after the final head's block
/// (no status line first) are the body's trailer fields: libcurl hands them
/// over one line each once the body has ended (chunked HTTP/1.1, HTTP/2), with
/// no blank line after them, so they are kept until the transfer ends
/// (`takeTrailers`).
/// After a header pause libcurl may pass several lines in one call, so a call's
/// bytes are split on LF.
struct ResponseHeadParser {
    private var statusCode: Int?
    private var httpVersion = ""
    /// The fields being parsed (`scratch`) and the last head's (see `HeadBuffers`).
    private var buffers: HeadBuffers
    private var contentLength: Int64?
    private var hasContentEncoding = false
    private var contentTypeSeen = false
    private var contentTypeIsMultipart = false
    private var hasSetCookie = false
    private var hasStrictTransportSecurity = false
    /// Content-Length values that differ (in one field or several), and
    /// Transfer-Encoding seen: either makes the framing untrustworthy.
    private var conflictingContentLength = false
    private var hasContentLength = false
    private var hasTransferEncoding = false
    /// A final head's block ended: later lines without a status line are trailers.
    private var finalHeadEnded = false
    /// The trailer fields after the final head's body; nil when none came
    /// (made on the first one: most responses have none).
    private var trailers: ResponseHeaderFields?
    /// The head of a final block that ended in this call, handed out by `consume`.
    private var completed: ResponseHead?
    /// Total header bytes accepted, to cap hostile responses.
    private(set) var byteCount = 0

    /// `buffers`: what the transfer's easy handle kept from its last transfer.
    init(buffers: HeadBuffers = HeadBuffers()) {
        self.buffers = buffers
    }

    /// The buffers, for the easy handle to keep for its next transfer (the
    /// next head's `beginBlock` empties them).
    mutating func takeBuffers() -> HeadBuffers {
        let taken = buffers
        buffers = HeadBuffers()
        return taken
    }

    /// Feeds one callback's bytes. Returns a head when a block ended: a
    /// final one, or an informational one (`ResponseHead.isInformational`).
    /// libcurl calls once per line, so a call ends at most one block, except
    /// after a header pause, which the engine never asks for.
    ///
    /// The loop carries no `ResponseHead?`: kept in a local, the optimiser
    /// copied that 58-byte value through the stack on every byte scanned,
    /// and the partly overlapping stores stalled each time (about 5% of the
    /// engine thread on small responses).
    mutating func consume(_ bytes: UnsafeRawBufferPointer) -> ResponseHead? {
        byteCount += bytes.count
        guard let base = bytes.baseAddress else { return nil }
        var lineStart = 0
        while lineStart < bytes.count {
            // memchr, not firstIndex(of:): libcurl calls once per line, and
            // the generic byte loop was about a tenth of the parser's time.
            let lineEnd = memchr(base + lineStart, Int32(UInt8(ascii: "\n")), bytes.count - lineStart)
                .map { base.distance(to: UnsafeRawPointer($0)) } ?? bytes.count
            consumeLine(UnsafeRawBufferPointer(start: base + lineStart, count: lineEnd - lineStart))
            lineStart = lineEnd + 1
        }
        // Taken, not copied: a copy retains the head's buffers once more.
        return completed.take()
    }

    private mutating func consumeLine(_ raw: UnsafeRawBufferPointer) {
        var line = raw
        if let last = line.last, last == UInt8(ascii: "\r") {
            line = UnsafeRawBufferPointer(rebasing: line[0..<(line.count - 1)])
        }
        if line.isEmpty {
            endOfBlock()
            return
        }
        if Self.isStatusLine(line) {
            beginBlock(statusLine: line)
            return
        }
        guard statusCode != nil else {
            if finalHeadEnded { appendTrailer(line) }  // else a stray line
            return
        }
        if let first = line.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t"), !buffers.scratch.isEmpty {
            // Obsolete line folding: libcurl does not unfold, so we do.
            buffers.scratch.unfoldIntoLastValue(Self.trimmed(line))
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let nameBytes = UnsafeRawBufferPointer(rebasing: line[0..<colon])
        let valueBytes = Self.trimmed(UnsafeRawBufferPointer(rebasing: line[(colon + 1)...]))
        buffers.scratch.append(name: nameBytes, value: valueBytes)
        // Compared as bytes: no String work for the fields we look at.
        if nameBytes.equalsIgnoringASCIICase("content-length") {
            let (value, consistent) = Self.contentLengthList(valueBytes)
            if !consistent || (hasContentLength && contentLength != value) { conflictingContentLength = true }
            hasContentLength = true
            contentLength = value
        } else if nameBytes.equalsIgnoringASCIICase("transfer-encoding") {
            hasTransferEncoding = true
        } else if nameBytes.equalsIgnoringASCIICase("content-encoding") {
            hasContentEncoding = true
        } else if !hasSetCookie, nameBytes.equalsIgnoringASCIICase("set-cookie") {
            hasSetCookie = true
        } else if !hasStrictTransportSecurity, nameBytes.equalsIgnoringASCIICase("strict-transport-security") {
            hasStrictTransportSecurity = true
        } else if !contentTypeSeen, nameBytes.equalsIgnoringASCIICase("content-type") {
            // The first one: repeated fields are joined behind it.
            contentTypeSeen = true
            contentTypeIsMultipart = valueBytes.count >= 10
                && UnsafeRawBufferPointer(rebasing: valueBytes[0..<10]).equalsIgnoringASCIICase("multipart/")
        }
        return
    }

    private mutating func appendTrailer(_ line: UnsafeRawBufferPointer) {
        // Appended in place: a copy out of the optional and back would copy
        // the fields' buffers at each line.
        if trailers == nil { trailers = ResponseHeaderFields() }
        trailers!.append(line: line)
    }

    /// The trailer fields of the final response's body, if it had any.
    mutating func takeTrailers() -> ResponseHeaderFields? {
        trailers.take()
    }

    /// Starts with "HTTP/" (compared as bytes: `starts(with:)` over a
    /// String's UTF-8 view took a generic path on every line).
    private static func isStatusLine(_ line: UnsafeRawBufferPointer) -> Bool {
        line.count >= 5 && line[0] == UInt8(ascii: "H") && line[1] == UInt8(ascii: "T") && line[2] == UInt8(ascii: "T")
            && line[3] == UInt8(ascii: "P") && line[4] == UInt8(ascii: "/")
    }

    /// "HTTP/1.1 200 OK" → version "HTTP/1.1", status 200 (nil when unreadable).
    private mutating func beginBlock(statusLine: UnsafeRawBufferPointer) {
        let space = statusLine.firstIndex(of: UInt8(ascii: " ")) ?? statusLine.count
        httpVersion = Self.text(UnsafeRawBufferPointer(rebasing: statusLine[0..<space]))
        var index = space
        while index < statusLine.count, statusLine[index] == UInt8(ascii: " ") { index += 1 }
        var codeEnd = index
        while codeEnd < statusLine.count, statusLine[codeEnd] != UInt8(ascii: " ") { codeEnd += 1 }
        statusCode = Self.decimal(UnsafeRawBufferPointer(rebasing: statusLine[index..<codeEnd])).map { Int($0) }
        // Emptied with its capacity kept; room for a typical head the first
        // time, so it is parsed without regrowing.
        buffers.scratch.removeAll()
        buffers.scratch.reserveTypicalCapacity()
        contentLength = nil
        finalHeadEnded = false
        trailers = nil
        hasContentEncoding = false
        contentTypeSeen = false
        contentTypeIsMultipart = false
        hasSetCookie = false
        hasStrictTransportSecurity = false
        conflictingContentLength = false
        hasContentLength = false
        hasTransferEncoding = false
    }

    private mutating func endOfBlock() {
        guard let code = statusCode else { return }
        statusCode = nil
        if (100..<200).contains(code) {
            // Interim: a final response follows. Its fields are copied, not
            // handed out, so the handle's kept head buffers stay the final
            // head's (1xx responses are rare).
            guard code != 101 else { return }
            completed = ResponseHead(
                statusCode: code, httpVersion: httpVersion, fields: buffers.scratch, contentLength: nil,
                hasContentEncoding: false, contentTypeIsMultipart: false)
            return
        }
        finalHeadEnded = true
        completed = ResponseHead(
            statusCode: code, httpVersion: httpVersion, fields: buffers.fieldsToHandOut(), contentLength: contentLength,
            hasContentEncoding: hasContentEncoding, contentTypeIsMultipart: contentTypeIsMultipart,
            hasSetCookie: hasSetCookie, hasStrictTransportSecurity: hasStrictTransportSecurity,
            framingProblem: framingProblem)
    }

    /// What makes the final head's framing untrustworthy, if anything.
    private var framingProblem: FramingProblem? {
        if hasTransferEncoding && hasContentLength { return .contentLengthWithTransferEncoding }
        if conflictingContentLength { return .conflictingContentLengths }
        return nil
    }

    /// A Content-Length field's value: one decimal, or a comma-separated
    /// list of them (RFC 9110 §8.6 allows a recipient to take a list of
    /// equal values as one). `consistent` is false for a list of different
    /// values; `value` is nil when any member is not a decimal (libcurl
    /// refuses such a field itself).
    static func contentLengthList(_ bytes: UnsafeRawBufferPointer) -> (value: Int64?, consistent: Bool) {
        guard let comma = bytes.firstIndex(of: UInt8(ascii: ",")) else { return (decimal(bytes), true) }
        let first = decimal(trimmed(UnsafeRawBufferPointer(rebasing: bytes[0..<comma])))
        var rest = UnsafeRawBufferPointer(rebasing: bytes[(comma + 1)...])
        while true {
            let end = rest.firstIndex(of: UInt8(ascii: ",")) ?? rest.count
            let member = trimmed(UnsafeRawBufferPointer(rebasing: rest[0..<end]))
            // Empty members ("5, , 5") are allowed by the list syntax.
            if !member.isEmpty, decimal(member) != first { return (first, false) }
            guard end < rest.count else { return (first, true) }
            rest = UnsafeRawBufferPointer(rebasing: rest[(end + 1)...])
        }
    }

    /// Header bytes are usually ASCII: those are copied straight into a
    /// String (String(validating:) over raw bytes took a slow generic path
    /// and was the parser's main cost). Valid UTF-8 stays UTF-8; anything
    /// else is read as ISO-8859-1, as RFC 9110 §5.5 allows for field values.
    static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        if !bytes.contains(where: { $0 >= 0x80 }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        if let utf8 = String(validating: bytes, as: UTF8.self) { return utf8 }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    /// Without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// A non-negative decimal that fits in Int64, as Int64(String) reads it
    /// (an optional leading "+"), else nil.
    static func decimal(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        var digits = bytes
        if let first = digits.first, first == UInt8(ascii: "+") {
            digits = UnsafeRawBufferPointer(rebasing: digits[1...])
        }
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            value = sum
        }
        return value
    }

}
