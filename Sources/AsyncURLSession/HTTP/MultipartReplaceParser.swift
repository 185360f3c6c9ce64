import Foundation

/// Splits a `multipart/x-mixed-replace` body (RFC 2046 framing) into parts as
/// the bytes arrive: each part's header fields, then its body bytes. A value
/// type fed with chunks of any size; it keeps at most one delimiter's worth of
/// bytes back, so memory stays bounded whatever the part sizes.
struct MultipartReplaceParser {
    enum Output: Equatable {
        case partHead([HeaderField])
        case body(Data)
        /// The closing delimiter: nothing follows.
        case end
    }

    struct HeaderField: Equatable {
        var name: String
        var value: String
    }

    private enum State {
        /// Before the first delimiter (the preamble is ignored).
        case preamble
        /// Just after "--boundary": "--" ends the body, else a line end.
        case afterDelimiter
        case headers
        case body
        case finished
    }

    /// "\r\n--boundary"; the first delimiter may come without the CRLF.
    private let delimiter: [UInt8]
    private var state = State.preamble
    private var buffer: [UInt8] = []
    /// Headers of a part are capped: a hostile part cannot grow them forever.
    static let maximumHeaderBytes = 64 * 1024

    /// Nil unless the content type is multipart/x-mixed-replace with a boundary.
    init?(contentType: String) {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let type = parts.first, type.lowercased() == "multipart/x-mixed-replace" else { return nil }
        var boundary: String?
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else {
                continue
            }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            boundary = value
        }
        guard let boundary, !boundary.isEmpty, boundary.utf8.count <= 70 else { return nil }
        delimiter = Array("\r\n--\(boundary)".utf8)
    }

    mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [Output] {
        buffer.append(contentsOf: bytes)
        var outputs: [Output] = []
        var progressed = true
        while progressed && state != .finished {
            progressed = step(into: &outputs)
        }
        return outputs
    }

    /// One state transition; false when more bytes are needed.
    private mutating func step(into outputs: inout [Output]) -> Bool {
        switch state {
        case .finished:
            return false
        case .preamble:
            // The first delimiter may start the body without a leading CRLF.
            let bare = Array(delimiter.dropFirst(2))
            if buffer.starts(with: bare) {
                buffer.removeFirst(bare.count)
                state = .afterDelimiter
                return true
            }
            guard let index = firstIndex(of: delimiter) else {
                // Keep only what could still begin a delimiter.
                if buffer.count > delimiter.count { buffer.removeFirst(buffer.count - delimiter.count) }
                return false
            }
            buffer.removeFirst(index + delimiter.count)
            state = .afterDelimiter
            return true
        case .afterDelimiter:
            guard buffer.count >= 2 else { return false }
            if buffer[0] == UInt8(ascii: "-"), buffer[1] == UInt8(ascii: "-") {
                state = .finished
                outputs.append(.end)
                return false
            }
            // Skip transport padding up to the end of the delimiter line.
            guard let lineEnd = firstIndex(of: Array("\r\n".utf8)) else { return false }
            buffer.removeFirst(lineEnd + 2)
            state = .headers
            return true
        case .headers:
            if buffer.starts(with: Array("\r\n".utf8)) {
                // A part without header fields.
                buffer.removeFirst(2)
                outputs.append(.partHead([]))
                state = .body
                return true
            }
            guard let end = firstIndex(of: Array("\r\n\r\n".utf8)) else {
                if buffer.count > Self.maximumHeaderBytes {
                    state = .finished
                    outputs.append(.end)
                }
                return false
            }
            // The part's header block; an empty block is allowed.
            let block = String(decoding: buffer[0..<end], as: UTF8.self)
            buffer.removeFirst(end + 4)
            var fields: [HeaderField] = []
            for line in block.split(separator: "\r\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields.append(HeaderField(
                    name: line[..<colon].trimmingCharacters(in: .whitespaces),
                    value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            outputs.append(.partHead(fields))
            state = .body
            return true
        case .body:
            if let index = firstIndex(of: delimiter) {
                if index > 0 { outputs.append(.body(Data(buffer[0..<index]))) }
                buffer.removeFirst(index + delimiter.count)
                state = .afterDelimiter
                return true
            }
            // Everything but a possible partial delimiter at the end is body.
            let safe = buffer.count - (delimiter.count - 1)
            if safe > 0 {
                outputs.append(.body(Data(buffer[0..<safe])))
                buffer.removeFirst(safe)
            }
            return false
        }
    }

    private func firstIndex(of pattern: [UInt8]) -> Int? {
        guard pattern.count <= buffer.count else { return nil }
        var index = 0
        while index <= buffer.count - pattern.count {
            if buffer[index] == pattern[0] && buffer[index..<(index + pattern.count)].elementsEqual(pattern) {
                return index
            }
            index += 1
        }
        return nil
    }
}
