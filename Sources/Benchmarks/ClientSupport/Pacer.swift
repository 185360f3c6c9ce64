// A slow consumer (W6): after each chunk, wait until the bytes consumed so far
// are no ahead of `bytesPerSecond`. With a rate of 0 it never waits.
//
// With a rate of 0 (every workload but W6) the pacer must cost the client
// nothing: `consume` is inlined into the client and returns before any async
// call. As a plain cross-module async call it made 7 task allocations and
// several executor switches per chunk, about 1 us per small request of the
// events client: benchmark overhead, not the library's.
import Foundation

public struct Pacer: Sendable {
    public let bytesPerSecond: Double
    /// When pacing started; nil without a rate (no clock read per request).
    @usableFromInline var start: ContinuousClock.Instant?
    @usableFromInline var consumed = 0

    public init(bytesPerSecond: Double) {
        self.bytesPerSecond = bytesPerSecond
        start = bytesPerSecond > 0 ? .now : nil
    }

    @inlinable
    public var isActive: Bool { bytesPerSecond > 0 }

    /// The instant by which `consumed` bytes are allowed, or nil when no wait is needed.
    @usableFromInline
    mutating func dueInstant(after count: Int) -> ContinuousClock.Instant? {
        consumed += count
        guard let start else { return nil }
        let due = start + .seconds(Double(consumed) / bytesPerSecond)
        // Sleeping for less than a millisecond costs more than it paces.
        return due > ContinuousClock.now + .milliseconds(1) ? due : nil
    }

    /// Records `count` bytes consumed and suspends while ahead of the rate.
    @inlinable
    public mutating func consume(_ count: Int) async {
        guard isActive else { return }
        await pace(after: count)
    }

    @usableFromInline
    mutating func pace(after count: Int) async {
        if let due = dueInstant(after: count) {
            try? await Task.sleep(until: due, clock: .continuous)
        }
    }

    /// Records `count` bytes consumed and blocks the calling thread while ahead
    /// of the rate (for callback-based APIs).
    public mutating func consumeBlocking(_ count: Int) {
        guard isActive else { return }
        if let due = dueInstant(after: count) {
            let remaining = due - ContinuousClock.now
            let (seconds, attoseconds) = remaining.components
            let interval = Double(seconds) + Double(attoseconds) / 1e18
            if interval > 0 { Thread.sleep(forTimeInterval: interval) }
        }
    }
}
