import Foundation
import Testing

@testable import AsyncURLSession

/// The collecting consumer's buffer: large announced bodies go into a pooled,
/// prefaulted buffer handed over without a copy; everything else into Data.
@Suite struct CollectedBodyTests {
    /// Byte i is `UInt8(truncatingIfNeeded: i &* 31) &+ seed`: a 256-byte
    /// period, so built from one period appended over and over. (Mapped byte
    /// by byte, the megabytes these tests use cost seconds of a debug
    /// build's CPU on the cooperative threads the other tests wait for.)
    private static func bytes(_ count: Int, seed: UInt8) -> Data {
        let period = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 31) &+ seed }
        var data = Data(capacity: count)
        while data.count + period.count <= count { data.append(contentsOf: period) }
        data.append(contentsOf: period[0..<(count - data.count)])
        return data
    }

    private static func append(_ data: Data, to body: inout CollectedBody, chunk: Int = 16_384) {
        var offset = 0
        while offset < data.count {
            let end = min(offset + chunk, data.count)
            data[offset..<end].withUnsafeBytes { body.append($0) }
            offset = end
        }
    }

    @Test func take_largeAnnouncedBody_returnsExactBytes() {
        let expected = Self.bytes(300_000, seed: 7)
        var body = CollectedBody()
        body.reserve(expected.count)
        Self.append(expected, to: &body)
        #expect(body.count == expected.count)
        #expect(body.bytes == expected)
        let taken = body.take()
        #expect(taken == expected)
        #expect(body.isEmpty)
    }

    /// A body past `streamingThreshold` goes in with streaming stores; odd
    /// chunk sizes leave the destination unaligned for most copies.
    @Test func take_bodyFilledWithStreamingStores_returnsExactBytes() {
        let expected = Self.bytes(CollectedBody.streamingThreshold + 70_001, seed: 5)
        var body = CollectedBody()
        body.reserve(expected.count)
        Self.append(expected, to: &body, chunk: 16_381)
        #expect(body.take() == expected)
    }

    /// A body several populate windows long: its pages are faulted in a
    /// window at a time as the bytes arrive, in 16 KiB writes and in one
    /// large append (a held body) that crosses windows at once. (A small
    /// window, so that the pool holds no more than the other tests expect.)
    @Test(arguments: [16_381, 600_000])
    func take_bodyLargerThanThePopulateWindow_returnsExactBytes(chunk: Int) {
        let window = 64 * 4096
        let expected = Self.bytes(3 * window + 70_001, seed: 11)
        var body = CollectedBody(populateWindow: window)
        body.reserve(expected.count)
        Self.append(expected, to: &body, chunk: chunk)
        #expect(body.take() == expected)
    }

    /// The window after the last byte received is faulted in ahead of the
    /// bytes (one call, not a trap per page).
    @Test func largeBuffer_populatesTheNextWindowAhead() {
        let window = 64 * 4096
        let count = 8 * window + 12_345
        // A pool of its own: a buffer reused from the shared one may be
        // resident already.
        var body = CollectedBody(populateWindow: window, pool: BodyBufferPool())
        body.reserve(count)
        Self.append(Self.bytes(3 * window + 1, seed: 13), to: &body)
        #expect(body.isResident((3 * window + 4096)..<(4 * window)) == true)
    }

    @Test func append_moreThanAnnounced_keepsEveryByte() {
        let expected = Self.bytes(BodyBufferPool.capacity(for: 200_000) + 5_000, seed: 3)
        var body = CollectedBody()
        body.reserve(200_000)
        Self.append(expected, to: &body, chunk: 7_000)
        #expect(body.take() == expected)
    }

    @Test func smallBody_usesData() {
        let expected = Self.bytes(1_000, seed: 1)
        var body = CollectedBody()
        body.reserve(expected.count)
        Self.append(expected, to: &body, chunk: 100)
        #expect(body.take() == expected)
    }

    /// A pool of the test's own: the shared one also serves every other
    /// test's bodies, in parallel.
    @Test func droppedResult_returnsBufferToPool() {
        let pool = BodyBufferPool()
        let count = 3 * 1024 * 1024 + 17
        let capacity = BodyBufferPool.capacity(for: count)
        do {
            var body = CollectedBody(pool: pool)
            body.reserve(count)
            Self.append(Self.bytes(count, seed: 9), to: &body, chunk: 65_536)
            let taken = body.take()
            #expect(taken.count == count)
            #expect(taken.last == Self.bytes(count, seed: 9).last)
            #expect(pool.bytesInUse == capacity)
        }
        // The Data is gone: its buffer is idle in the pool, and the next take
        // of that capacity reuses it.
        #expect(pool.bytesInUse == 0)
        #expect(pool.idleBytes == capacity)
        guard let reused = pool.take(capacity: capacity) else {
            Issue.record("no buffer")
            return
        }
        #expect(pool.idleBytes == 0)
        pool.give(reused, capacity: capacity)
    }

    /// Idle bytes stay within what was in use at the peak (at least
    /// `minimumIdleLimit`): a buffer given back beyond that is freed.
    @Test func idleBytes_stayWithinThePeakInUse() {
        let pool = BodyBufferPool()
        let first = BodyBufferPool.capacity(for: 10 << 20)
        let second = BodyBufferPool.capacity(for: 9 << 20)
        guard let a = pool.take(capacity: first) else {
            Issue.record("no buffer")
            return
        }
        pool.give(a, capacity: first)
        #expect(pool.idleBytes == first)
        // In use at once: never more than 10 MiB, so the limit is 16 MiB,
        // and 10 + 9 MiB idle would pass it.
        guard let b = pool.take(capacity: second) else {
            Issue.record("no buffer")
            return
        }
        pool.give(b, capacity: second)
        #expect(pool.idleBytes == first)
        #expect(!pool.holds(b))
    }

    /// Idle buffers are kept only while responses keep coming: one idle for
    /// longer than `idleLifetime` is freed at the next take or give.
    @Test(.timeLimit(.scaledMinutes(1)))
    func idleBuffer_isFreedAfterItsLifetime() async throws {
        let pool = BodyBufferPool(idleLifetime: 50_000_000)
        let capacity = BodyBufferPool.capacity(for: 5 * 1024 * 1024 + 3)
        let other = BodyBufferPool.capacity(for: 6 * 1024 * 1024 + 3)
        guard let buffer = pool.take(capacity: capacity) else {
            Issue.record("no buffer")
            return
        }
        pool.give(buffer, capacity: capacity)
        #expect(pool.holds(buffer))
        try await Task.sleep(nanoseconds: pool.idleLifetime + 100_000_000)
        guard let next = pool.take(capacity: other) else {
            Issue.record("no buffer")
            return
        }
        #expect(!pool.holds(buffer), "a buffer idle for longer than its lifetime is still held")
        #expect(pool.idleBytes == 0)
        pool.give(next, capacity: other)
    }
}
