#if canImport(FoundationNetworking)
import Dispatch
import Foundation

// Apple's CFStream names for the dispatch queue of a stream's events, so
// `CFWriteStreamSetDispatchQueue(outputStream as CFWriteStream, queue)`
// compiles unchanged. swift-corelibs-foundation keeps CoreFoundation
// private; here the CF types are the Foundation classes they bridge to.

/// Apple's CFReadStream is toll-free bridged to InputStream.
public typealias CFReadStream = InputStream
/// Apple's CFWriteStream is toll-free bridged to OutputStream.
public typealias CFWriteStream = OutputStream

/// Delivers the stream's delegate events on `queue` (`nil`: no queue; the
/// events go back to the run loops the stream is scheduled in, or to its
/// private queue). Setting a queue takes the stream off its run loops.
///
/// Only streams made by `Stream.getBoundStreams` have delegate events here;
/// for any other stream (swift-corelibs-foundation's file, data and memory
/// streams) this does nothing. The stream is optional, as Apple's imported
/// `CFReadStream!` parameter lets callers pass an optional.
public func CFReadStreamSetDispatchQueue(_ stream: CFReadStream?, _ queue: DispatchQueue?) {
    (stream as? BoundInputStream)?.setDispatchQueue(queue)
}

/// Delivers the stream's delegate events on `queue`; see
/// `CFReadStreamSetDispatchQueue`. Does nothing for streams that are not
/// made by `Stream.getBoundStreams`.
public func CFWriteStreamSetDispatchQueue(_ stream: CFWriteStream?, _ queue: DispatchQueue?) {
    (stream as? BoundOutputStream)?.setDispatchQueue(queue)
}
#endif
