// A slow consumer (W6): after each chunk, wait until the bytes consumed so far
// are no ahead of `bytesPerSecond`. With a rate of 0 it never waits.
import Foundation

public struct Pacer: Sendable {
    public let bytesPerSecond: Double
    private let start = ContinuousClock.now
    private var consumed = 0

    public init(bytesPerSecond: Double) {
        self.bytesPerSecond = bytesPerSecond
    }

    public var isActive: Bool { bytesPerSecond > 0 }

    /// The instant by which `consumed` bytes are allowed, or nil when no wait is needed.
    private mutating func dueInstant(after count: Int) -> ContinuousClock.Instant? {
        consumed += count
        guard bytesPerSecond > 0 else { return nil }
        let due = start + .seconds(Double(consumed) / bytesPerSecond)
        // Sleeping for less than a millisecond costs more than it paces.
        return due > ContinuousClock.now + .milliseconds(1) ? due : nil
    }

    /// Records `count` bytes consumed and suspends while ahead of the rate.
    public mutating func consume(_ count: Int) async {
        if let due = dueInstant(after: count) {
            try? await Task.sleep(until: due, clock: .continuous)
        }
    }

    /// Records `count` bytes consumed and blocks the calling thread while ahead
    /// of the rate (for callback-based APIs).
    public mutating func consumeBlocking(_ count: Int) {
        if let due = dueInstant(after: count) {
            let remaining = due - ContinuousClock.now
            let (seconds, attoseconds) = remaining.components
            let interval = Double(seconds) + Double(attoseconds) / 1e18
            if interval > 0 { Thread.sleep(forTimeInterval: interval) }
        }
    }
}
