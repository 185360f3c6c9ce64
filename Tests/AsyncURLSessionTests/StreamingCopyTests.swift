import CStreamingCopy
import Foundation
import Testing

/// `streaming_copy`, the cache-bypassing copy that fills large collected
/// bodies: every byte arrives, whatever the alignment of either side and
/// the length, and nothing outside the destination range is touched.
@Suite struct StreamingCopyTests {
    @Test func copiesExactly_atEveryAlignmentAndLength() {
        let lengths = [0, 1, 15, 16, 63, 64, 255, 256, 257, 1_000, 16_381, 16_384, 65_537]
        let guardBytes = 64
        let capacity = guardBytes + 16 + 65_537 + guardBytes
        var source = [UInt8](repeating: 0, count: 65_537 + 16)
        for index in source.indices { source[index] = UInt8(truncatingIfNeeded: index &* 131 &+ 7) }
        let untouchedReference = [UInt8](repeating: 0xEE, count: capacity)
        var mismatches: [String] = []
        for length in lengths {
            for destinationOffset in 0..<17 {
                for sourceOffset in [0, 1, 8] {
                    var destination = [UInt8](repeating: 0xEE, count: capacity)
                    destination.withUnsafeMutableBytes { to in
                        source.withUnsafeBytes { from in
                            streaming_copy(
                                to.baseAddress! + guardBytes + destinationOffset,
                                from.baseAddress! + sourceOffset, length)
                        }
                    }
                    let start = guardBytes + destinationOffset
                    // memcmp, not Array slices: 663 cases of up to 64 KiB took
                    // about 2 s of a debug build's CPU compared element by element.
                    let copiedExactly = destination.withUnsafeBytes { to in
                        source.withUnsafeBytes { from in
                            memcmp(to.baseAddress! + start, from.baseAddress! + sourceOffset, length) == 0
                        }
                    }
                    let untouched = destination.withUnsafeBytes { to in
                        untouchedReference.withUnsafeBytes { reference in
                            memcmp(to.baseAddress!, reference.baseAddress!, start) == 0
                                && memcmp(to.baseAddress! + start + length, reference.baseAddress!, capacity - start - length) == 0
                        }
                    }
                    if !copiedExactly || !untouched {
                        mismatches.append("length \(length), offsets \(destinationOffset)/\(sourceOffset)")
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
