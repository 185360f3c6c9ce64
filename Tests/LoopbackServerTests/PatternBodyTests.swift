import Foundation
import LoopbackServer
import Testing

@Suite struct PatternBodyTests {
    @Test func bodyMatchesPatternByte() {
        for offset in [0, 1, 255, 256, 65_535, 65_536, 1_000_003] {
            let body = LoopbackServer.patternBody(count: 200_000, offset: offset)
            #expect(body.count == 200_000)
            let mismatch = body.enumerated().first { index, byte in
                byte != LoopbackServer.patternByte(at: offset + index)
            }
            #expect(mismatch == nil, "offset \(offset): first mismatch at \(String(describing: mismatch?.offset))")
        }
    }

    @Test func patternIsNotPeriodicIn256() {
        let body = LoopbackServer.patternBody(count: 512)
        #expect(body.prefix(256) != body.suffix(256))
    }

    @Test func emptyAndNegativeCounts() {
        #expect(LoopbackServer.patternBody(count: 0).isEmpty)
        #expect(LoopbackServer.patternBody(count: -5).isEmpty)
    }
}
