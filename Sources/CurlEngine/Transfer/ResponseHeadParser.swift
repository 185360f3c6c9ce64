/// Collects the header lines libcurl hands to the header callback into a
/// `ResponseHead`, one header block at a time.
///
/// libcurl calls the header callback once per line for every block it reads:
/// 1xx interim responses, the final response, and trailers after the body.
/// Only a block that starts with a status line and whose status is not 1xx
/// is a response head; trailer lines (no status line first) are ignored.
/// After a header pause libcurl may pass several lines in one call, so a call's
/// bytes are split on LF.
struct ResponseHeadParser {
    private var statusCode: Int?
    private var httpVersion = ""
    private var headers: [(name: String, value: String)] = []
    private var contentLength: Int64?
    private var hasContentEncoding = false
    /// Total header bytes accepted, to cap hostile responses.
    private(set) var byteCount = 0

    /// Feeds one callback's bytes. Returns a head when a final block ended.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) -> ResponseHead? {
        byteCount += bytes.count
        var result: ResponseHead?
        var lineStart = 0
        for index in 0..<bytes.count where bytes[index] == UInt8(ascii: "\n") {
            if let head = consumeLine(UnsafeRawBufferPointer(rebasing: bytes[lineStart..<index])) {
                result = head
            }
            lineStart = index + 1
        }
        if lineStart < bytes.count,
            let head = consumeLine(UnsafeRawBufferPointer(rebasing: bytes[lineStart..<bytes.count]))
        {
            result = head
        }
        return result
    }

    private mutating func consumeLine(_ raw: UnsafeRawBufferPointer) -> ResponseHead? {
        var line = raw
        if let last = line.last, last == UInt8(ascii: "\r") {
            line = UnsafeRawBufferPointer(rebasing: line[0..<(line.count - 1)])
        }
        if line.isEmpty {
            return endOfBlock()
        }
        if line.starts(with: "HTTP/".utf8) {
            beginBlock(statusLine: Self.text(line))
            return nil
        }
        guard statusCode != nil else { return nil }  // trailer or stray line
        if let first = line.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t"),
            let previous = headers.indices.last
        {
            // Obsolete line folding: libcurl does not unfold, so we do.
            let continuation = Self.text(line).trimmingWhitespace()
            headers[previous].value += " " + continuation
            return nil
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = Self.text(UnsafeRawBufferPointer(rebasing: line[0..<colon]))
        let value = Self.text(UnsafeRawBufferPointer(rebasing: line[(colon + 1)...])).trimmingWhitespace()
        headers.append((name: name, value: value))
        if name.equalsIgnoringASCIICase("Content-Length") {
            contentLength = Int64(value)
        } else if name.equalsIgnoringASCIICase("Content-Encoding") {
            hasContentEncoding = true
        }
        return nil
    }

    private mutating func beginBlock(statusLine: String) {
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        httpVersion = parts.first.map(String.init) ?? "HTTP/1.1"
        statusCode = parts.count > 1 ? Int(parts[1]) : nil
        headers.removeAll(keepingCapacity: true)
        contentLength = nil
        hasContentEncoding = false
    }

    private mutating func endOfBlock() -> ResponseHead? {
        guard let code = statusCode else { return nil }
        statusCode = nil
        if (100..<200).contains(code) { return nil }  // interim response: a final one follows
        return ResponseHead(
            statusCode: code, httpVersion: httpVersion, headers: headers, contentLength: contentLength,
            hasContentEncoding: hasContentEncoding)
    }

    /// Header bytes are usually ASCII; anything that is not valid UTF-8 is
    /// read as ISO-8859-1, as RFC 9110 §5.5 allows for field values.
    private static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        if let utf8 = String(validating: bytes, as: UTF8.self) { return utf8 }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
