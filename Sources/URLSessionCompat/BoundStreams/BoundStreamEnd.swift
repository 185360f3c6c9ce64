#if canImport(FoundationNetworking)
import Dispatch
import Foundation

/// What `BoundInputStream` and `BoundOutputStream` are alike in: a stream
/// that is one side of a `BoundStreamBuffer`.
///
/// The two cannot share a superclass (one must be an `InputStream`, the
/// other an `OutputStream`) and a protocol cannot override `Stream`'s
/// methods, so each class keeps its overrides, each one line that hands the
/// call to `buffer` for `side`; what needs no override is written here once.
protocol BoundStreamEnd: Stream {
    var buffer: BoundStreamBuffer { get }
    var side: BoundStreamBuffer.Side { get }
}

extension BoundStreamEnd {
    var events: BoundStreamEventChannel { buffer.events(side) }

    /// `CF…StreamSetDispatchQueue` for this end.
    func setDispatchQueue(_ queue: DispatchQueue?) {
        events.setDispatchQueue(queue)
    }
}
#endif
