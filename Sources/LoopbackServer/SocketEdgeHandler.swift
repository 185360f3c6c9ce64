import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The first handler of every connection's pipeline, nearest the socket and
/// below TLS. It passes everything through; its context is how a fault route
/// reaches the raw connection: bytes written from it skip the TLS layer (a
/// record the client cannot decrypt), and a close from it skips TLS's
/// close_notify (a truncation the client must notice).
final class SocketEdgeHandler: ChannelDuplexHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Ends `connection` the way `fault` says, on its event loop.
    static func breakConnection(_ connection: any Channel, _ fault: ConnectionFault) {
        connection.eventLoop.assertInEventLoop()
        guard let edge = try? connection.pipeline.syncOperations.context(handlerType: SocketEdgeHandler.self) else {
            connection.close(promise: nil)
            return
        }
        switch fault {
        case .reset:
            // SO_LINGER 0: close() sends a TCP reset instead of a FIN.
            guard let socket = connection as? any SocketOptionProvider else { break }
            socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
                edge.close(promise: nil)
            }
            return
        case .garbage:
            // A TLS application-data record header and 32 bytes that are no
            // ciphertext of this session (on plain HTTP: stray body bytes).
            var buffer = connection.allocator.buffer(capacity: 37)
            buffer.writeBytes([0x17, 0x03, 0x03, 0x00, 0x20] + [UInt8](repeating: 0xA5, count: 32))
            edge.writeAndFlush(NIOAny(buffer), promise: nil)
        }
        edge.close(promise: nil)
    }
}

/// How a fault route ends a connection under the TLS layer.
enum ConnectionFault: Sendable {
    /// A TCP reset, no close_notify.
    case reset
    /// Bytes that are not a TLS record of the session, then a close.
    case garbage
}
