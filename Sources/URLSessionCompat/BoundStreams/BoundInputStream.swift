#if canImport(FoundationNetworking)
import Foundation

/// The reading end of a bound pair (`Stream.getBoundStreams`).
///
/// Every method swift-corelibs-foundation's `InputStream` implements through
/// its CFReadStream is overridden, so the CF stream the superclass makes in
/// `init(data:)` (an empty one; InputStream's only designated initializer
/// that cannot fail) is never opened or read.
///
/// Thread-safe although not `Sendable` (Foundation marks InputStream's
/// conformance unavailable): it has no state of its own besides `let`s; the
/// pair's state is in `BoundStreamBuffer` (under its lock) and the delegate
/// and schedules are in `BoundStreamEventChannel` (under its Mutex).
final class BoundInputStream: InputStream, BoundStreamEnd {
    let buffer: BoundStreamBuffer
    var side: BoundStreamBuffer.Side { .input }

    init(buffer: BoundStreamBuffer) {
        self.buffer = buffer
        super.init(data: Data())
        events.attach(self)
    }

    /// Freeing the input closes it, as releasing a CFReadStream does: the
    /// writer's next write fails instead of blocking forever.
    deinit {
        buffer.close(.input)
    }

    override func open() { buffer.open(.input) }

    override func close() { buffer.close(.input) }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        self.buffer.read(into: buffer, maxLength: len)
    }

    /// The bytes are in a ring, not one block a pointer could show.
    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool {
        false
    }

    override var hasBytesAvailable: Bool { buffer.hasBytesAvailable }

    override var streamStatus: Stream.Status { buffer.status(.input) }

    override var streamError: (any Error)? { buffer.error(.input) }

    /// A bound pair has no properties (Apple's has none a program can use).
    override func property(forKey key: Stream.PropertyKey) -> AnyObject? { nil }

    override func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool { false }

    override func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
        events.schedule(in: aRunLoop, forMode: mode)
    }

    override func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
        events.remove(from: aRunLoop, forMode: mode)
    }

    /// Kept by the event channel, weakly, behind its lock: it is read on the
    /// thread that delivers events while the program may set it on another.
    /// `nil` until set, as swift-corelibs-foundation's streams have it
    /// (Apple's answer themselves when none is set).
    override var delegate: (any StreamDelegate)? {
        get { events.delegate }
        set { events.delegate = newValue }
    }
}
#endif
