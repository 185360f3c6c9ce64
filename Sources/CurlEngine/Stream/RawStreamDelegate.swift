import Foundation

/// The core's side of a raw stream: a connection libcurl opened (TCP, TLS,
/// proxy tunnel) for a transfer with `TransferRequest.connectOnly`, then
/// read and written by us. Called on the engine thread; must return quickly.
///
/// The connect transfer's `TransferDelegate` (the same object) hears first:
/// `transferDidComplete` without error means the stream is open.
package protocol RawStreamDelegate: AnyObject, Sendable {
    /// Bytes arrived. Return false to stop reading until
    /// `CurlEngine.resumeReadingStream` (backpressure: the socket's receive
    /// buffer fills and the peer slows down).
    func streamDidReceive(_ bytes: UnsafeRawBufferPointer, of id: TransferID) -> Bool
    /// Every byte queued so far, up to `totalBytes`, was handed to the socket.
    func streamDidWrite(totalBytes: Int64, of id: TransferID)
    /// The peer closed (nil) or the connection failed; told once, last.
    func streamDidEnd(_ error: URLError?, of id: TransferID)
}
