import Foundation
import NIOCore

extension LoopbackServer {
    /// The deterministic body every byte route serves: byte i of any body is `patternByte(at: i)`.
    ///
    /// Its period is 65,536 bytes (not 256), so a chunk delivered at the wrong place, or
    /// twice, changes the bytes a client sees and is detected.
    public static func patternByte(at offset: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: (offset &* 31) &+ (offset >> 8) &+ 7)
    }

    /// `count` pattern bytes starting at pattern offset `offset` (a negative count gives no bytes).
    public static func patternBody(count: Int, offset: Int = 0) -> Data {
        guard count > 0 else { return Data() }
        var data = Data(count: count)
        data.withUnsafeMutableBytes { destination in
            PatternBody.copy(offset: offset, into: destination)
        }
        return data
    }
}

/// Fast production of pattern bytes: the pattern repeats every `period` bytes, so pieces are
/// copied out of a precomputed table instead of computed byte by byte (1 GiB bodies).
enum PatternBody {
    /// `patternByte(at:)` depends on `offset mod 256` and `(offset >> 8) mod 256` only.
    static let period = 65_536

    /// Two periods back to back: any run of up to one period starting anywhere in the first
    /// period is one contiguous slice.
    private static let table: [UInt8] = (0..<(2 * period)).map { LoopbackServer.patternByte(at: $0) }

    /// Fills `destination` with the pattern bytes from `offset` on.
    static func copy(offset: Int, into destination: UnsafeMutableRawBufferPointer) {
        var start = positiveModulo(offset)
        var written = 0
        table.withUnsafeBytes { source in
            while written < destination.count {
                let n = min(period, destination.count - written)
                let slice = UnsafeRawBufferPointer(rebasing: source[start..<(start + n)])
                UnsafeMutableRawBufferPointer(rebasing: destination[written..<(written + n)])
                    .copyMemory(from: slice)
                written += n
                start = (start + n) % period
            }
        }
    }

    /// A buffer holding `count` pattern bytes from `offset` on.
    static func buffer(offset: Int, count: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: count)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { destination in
            copy(offset: offset, into: UnsafeMutableRawBufferPointer(rebasing: destination[0..<count]))
            return count
        }
        return buffer
    }

    private static func positiveModulo(_ offset: Int) -> Int {
        let r = offset % period
        return r < 0 ? r + period : r
    }
}
