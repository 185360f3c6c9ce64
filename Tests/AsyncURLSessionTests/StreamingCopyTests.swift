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
                    let copied = destination[start..<(start + length)]
                    let untouched = destination[..<start] + destination[(start + length)...]
                    if !copied.elementsEqual(source[sourceOffset..<(sourceOffset + length)])
                        || untouched.contains(where: { $0 != 0xEE })
                    {
                        mismatches.append("length \(length), offsets \(destinationOffset)/\(sourceOffset)")
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
