/// Decodes an HTTP/1.1 chunked body (RFC 9112 §7.1) that libcurl hands over
/// raw, for the one case where the engine needs to know where the response
/// ends before libcurl says so: a full-duplex exchange, whose request body
/// is still streaming when the server ends its response. libcurl 7.88.1
/// completes a transfer only once its upload has ended too, and gives no
/// signal at the end of a chunked response (see `Transfer.chunkDecoder`).
///
/// A value type with explicit states; `decode` never allocates but for the
/// trailer lines. libcurl still parses the same bytes (it needs the end
/// too), so a body it accepted is well formed; anything else is `.malformed`.
struct ChunkedBodyDecoder {
    enum State: Equatable {
        /// Reading the hex size of the next chunk.
        case size(value: UInt64, digits: Int)
        /// After the size: an extension, up to the line's end.
        case sizeLineEnd(size: UInt64)
        /// Inside a chunk's data.
        case data(remaining: UInt64)
        /// After a chunk's data: its CRLF.
        case dataLineEnd
        /// After the last (zero) chunk: trailer lines, then an empty line.
        case trailerLine
        case ended
        case malformed
    }

    private(set) var state = State.size(value: 0, digits: 0)
    /// The trailer section's lines (without CRLF), once ended.
    private(set) var trailerLines: [[UInt8]] = []
    private var line: [UInt8] = []

    /// Hex digits in a chunk size at most (2^60 bytes).
    static let maximumSizeDigits = 15
    /// libcurl's own cap on a header line.
    static let maximumTrailerLineBytes = 100 * 1024

    /// Feeds raw bytes; `emit` gets the data bytes in order, as slices of
    /// `bytes`. Returns the state after them.
    @discardableResult
    mutating func decode(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) -> Void) -> State {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch state {
            case .size(let value, let digits):
                if let digit = Self.hexValue(byte) {
                    guard digits < Self.maximumSizeDigits else { state = .malformed; return state }
                    state = .size(value: value << 4 | UInt64(digit), digits: digits + 1)
                } else if digits > 0, byte == UInt8(ascii: "\n") {
                    state = value == 0 ? .trailerLine : .data(remaining: value)
                } else if digits > 0 {
                    state = .sizeLineEnd(size: value)  // CR, an extension, or spaces
                } else {
                    state = .malformed
                    return state
                }
                index += 1
            case .sizeLineEnd(let size):
                if byte == UInt8(ascii: "\n") { state = size == 0 ? .trailerLine : .data(remaining: size) }
                index += 1
            case .data(let remaining):
                let count = Int(min(UInt64(bytes.count - index), remaining))
                emit(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]))
                index += count
                state = remaining == UInt64(count) ? .dataLineEnd : .data(remaining: remaining - UInt64(count))
            case .dataLineEnd:
                if byte == UInt8(ascii: "\n") {
                    state = .size(value: 0, digits: 0)
                } else if byte != UInt8(ascii: "\r") {
                    state = .malformed
                    return state
                }
                index += 1
            case .trailerLine:
                if byte == UInt8(ascii: "\n") {
                    if line.last == UInt8(ascii: "\r") { line.removeLast() }
                    if line.isEmpty {
                        state = .ended
                    } else {
                        trailerLines.append(line)
                        line.removeAll()
                    }
                } else {
                    guard line.count < Self.maximumTrailerLineBytes else { state = .malformed; return state }
                    line.append(byte)
                }
                index += 1
            case .ended, .malformed:
                return state
            }
        }
        return state
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
