#if canImport(FoundationNetworking)
import Foundation

extension Stream {
    /// Makes a pair of streams bound to each other: what is written to the
    /// output is read from the input, through a buffer of `bufferSize`
    /// bytes. Apple's Foundation has this (CFStreamCreateBoundPair);
    /// swift-corelibs-foundation does not, so code written for Apple
    /// (`Stream.getBoundStreams(withBufferSize: n, inputStream: &input,
    /// outputStream: &output)`) compiles unchanged with this one.
    ///
    /// - A write blocks until there is space, then takes what fits; a read
    ///   blocks until there are bytes or the output is closed, then returns
    ///   them, or 0 at the end. A writer faster than the reader waits, so
    ///   memory never exceeds `bufferSize` (kept at least 1 byte: a smaller
    ///   size would block every write forever).
    /// - Closing the output ends the input; closing the input fails the
    ///   output (`.atEnd`, writes return 0). Releasing an end closes it, so asking for one end
    ///   only (`nil` for the other) gives a stream whose partner is gone.
    /// - Delegate events go to the queue set with
    ///   `CFReadStreamSetDispatchQueue`/`CFWriteStreamSetDispatchQueue`, or
    ///   the run loop given to `schedule(in:forMode:)`; a stream scheduled
    ///   nowhere delivers them on a private queue (Apple would deliver none).
    public class func getBoundStreams(
        withBufferSize bufferSize: Int,
        inputStream: UnsafeMutablePointer<InputStream?>?,
        outputStream: UnsafeMutablePointer<OutputStream?>?
    ) {
        let buffer = BoundStreamBuffer(capacity: max(1, bufferSize))
        // Both made even when one is not asked for: the unasked one is freed
        // on return, which closes it, so its partner fails or ends at once
        // instead of waiting forever on a stream nobody holds.
        let input = BoundInputStream(buffer: buffer)
        let output = BoundOutputStream(buffer: buffer)
        inputStream?.pointee = input
        outputStream?.pointee = output
    }
}
#endif
