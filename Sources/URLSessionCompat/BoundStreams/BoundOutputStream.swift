#if canImport(FoundationNetworking)
import Foundation

/// The writing end of a bound pair (`Stream.getBoundStreams`).
///
/// Every method swift-corelibs-foundation's `OutputStream` implements through
/// its CFWriteStream is overridden, so the CF stream the superclass makes in
/// `init(toMemory:)` is never opened or written.
///
/// Thread-safe as `BoundInputStream` is: no state of its own besides `let`s;
/// the pair's state is behind `BoundStreamBuffer`'s lock and the delegate
/// and schedules behind `BoundStreamEventChannel`'s.
final class BoundOutputStream: OutputStream, BoundStreamEnd {
    let buffer: BoundStreamBuffer
    var side: BoundStreamBuffer.Side { .output }

    init(buffer: BoundStreamBuffer) {
        self.buffer = buffer
        super.init(toMemory: ())
        events.attach(self)
    }

    /// Required by `OutputStream` (its `toMemory()` calls it on the dynamic
    /// type, so `type(of: boundOutput).toMemory()` lands here). There is no
    /// input to pair it with, so it is an output whose reader is gone: it
    /// opens at its end: every write returns 0, as for a pair whose input
    /// was closed.
    required init(toMemory: ()) {
        let buffer = BoundStreamBuffer(capacity: 1)
        buffer.close(.input)
        self.buffer = buffer
        super.init(toMemory: ())
        events.attach(self)
    }

    /// Freeing the output closes it, as releasing a CFWriteStream does: the
    /// reader sees the end instead of blocking forever.
    deinit {
        buffer.close(.output)
    }

    override func open() { buffer.open(.output) }

    override func close() { buffer.close(.output) }

    override func write(_ buffer: UnsafePointer<UInt8>, maxLength len: Int) -> Int {
        self.buffer.write(from: buffer, maxLength: len)
    }

    override var hasSpaceAvailable: Bool { buffer.hasSpaceAvailable }

    override var streamStatus: Stream.Status { buffer.status(.output) }

    override var streamError: (any Error)? { buffer.error(.output) }

    /// A bound pair has no properties (not even `dataWrittenToMemoryStreamKey`:
    /// the bytes go to the reader, not to memory).
    override func property(forKey key: Stream.PropertyKey) -> AnyObject? { nil }

    override func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool { false }

    override func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
        events.schedule(in: aRunLoop, forMode: mode)
    }

    override func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
        events.remove(from: aRunLoop, forMode: mode)
    }

    /// Kept by the event channel, weakly, behind its lock (see BoundInputStream).
    override var delegate: (any StreamDelegate)? {
        get { events.delegate }
        set { events.delegate = newValue }
    }
}
#endif
