internal import CCurl
import Glibc

/// libcurl's socket open and close callbacks, set on every easy handle of a
/// session (`MultiSession.takeEasyHandle`), with the engine thread's
/// `ParkedSocketClaims` as their data.
///
/// Why: libcurl lets go of a keep-alive connection's socket when its
/// transfer ends and asks for it again when the next transfer reuses the
/// connection. The socket stays in epoll meanwhile (parked), and asking
/// for the mask it already has needs no `epoll_ctl`, but only if the
/// number still names the same socket: libcurl may have closed it and the
/// kernel given the number to a new one, which must be added. These hooks
/// tell the two apart. About one `EPOLL_CTL_MOD` per request went.
///
/// Both run inside libcurl calls on the engine thread (or a caller's
/// inline turn, which owns the loop), as `MultiSession.watch` does.
enum SocketHooks {
    static func install(on handle: EasyHandle, claims: ParkedSocketClaims) {
        install(on: handle, data: claims, open: openSocket, close: closeSocket)
    }

    /// The same hooks for a session with pool metrics: they also count its
    /// open connections (libcurl closes a connection with the hooks and data
    /// of the handle that opened it, so every socket is counted by the
    /// session it belongs to). The handle keeps the tally alive as long as
    /// libcurl may call them.
    static func install(on handle: EasyHandle, counting tally: ConnectionPoolTally) {
        install(on: handle, data: tally, open: openCountedSocket, close: closeCountedSocket)
        handle.socketHookOwner = tally
    }

    /// `open` and `close` must be the pair that reads `data` as its own type.
    private static func install(
        on handle: EasyHandle, data: some SocketHookData,
        open: ccurl_opensocket_callback, close: ccurl_closesocket_callback
    ) {
        let pointer = Unmanaged.passUnretained(data).toOpaque()
        _ = ccurl_easy_setopt_opensocket_function(handle.raw, open)
        _ = handle.set(CURLOPT_OPENSOCKETDATA, pointer: pointer)
        _ = ccurl_easy_setopt_closesocket_function(handle.raw, close)
        _ = handle.set(CURLOPT_CLOSESOCKETDATA, pointer: pointer)
        handle.socketHooksInstalled = true
    }
}

/// What the hooks tell of each socket opened and closed: the engine
/// thread's claims, or a session's tally (which tells the claims in turn).
protocol SocketHookData: AnyObject {
    func opened(_ socket: Int32)
    func closing(_ socket: Int32)
}

extension ParkedSocketClaims: SocketHookData {}
extension ConnectionPoolTally: SocketHookData {}

// A C callback cannot be generic, so each data type has its pair; both
// do the same (`openAndTell`, `tellAndClose`).
//
// The data is the engine thread's claims, alive as long as its loop, so no
// retain around the call.
private let openSocket: ccurl_opensocket_callback = { data, _, address in
    openAndTell(address, data, as: ParkedSocketClaims.self)
}

private let closeSocket: ccurl_closesocket_callback = { data, socket in
    tellAndClose(socket, data, as: ParkedSocketClaims.self)
}

// The data is the session's tally, which the handle (and its multi
// session) keeps alive.
private let openCountedSocket: ccurl_opensocket_callback = { data, _, address in
    openAndTell(address, data, as: ConnectionPoolTally.self)
}

private let closeCountedSocket: ccurl_closesocket_callback = { data, socket in
    tellAndClose(socket, data, as: ConnectionPoolTally.self)
}

/// Opens the socket libcurl asks for and tells `data` of it. SOCK_CLOEXEC
/// as well: a connection must not leak into a process the program starts
/// (the background agent, for one).
private func openAndTell<Listener: SocketHookData>(
    _ address: UnsafeMutablePointer<curl_sockaddr>?, _ data: UnsafeMutableRawPointer?, as _: Listener.Type
) -> Int32 {
    guard let address else { return -1 }
    let socket = Glibc.socket(
        address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
    if socket >= 0, let data {
        Unmanaged<Listener>.fromOpaque(data)._withUnsafeGuaranteedRef { $0.opened(socket) }
    }
    return socket
}

/// Tells `data` that libcurl is closing `socket`, then closes it.
private func tellAndClose<Listener: SocketHookData>(
    _ socket: Int32, _ data: UnsafeMutableRawPointer?, as _: Listener.Type
) -> Int32 {
    if let data {
        Unmanaged<Listener>.fromOpaque(data)._withUnsafeGuaranteedRef { $0.closing(socket) }
    }
    return Glibc.close(socket)
}
