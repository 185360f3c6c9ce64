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
        let data = Unmanaged.passUnretained(claims).toOpaque()
        _ = ccurl_easy_setopt_opensocket_function(handle.raw, openSocket)
        _ = handle.set(CURLOPT_OPENSOCKETDATA, pointer: data)
        _ = ccurl_easy_setopt_closesocket_function(handle.raw, closeSocket)
        _ = handle.set(CURLOPT_CLOSESOCKETDATA, pointer: data)
        handle.socketHooksInstalled = true
    }
}

// The data is the engine thread's claims, alive as long as its loop, so no
// retain around the call. SOCK_CLOEXEC as well: a connection must not leak
// into a process the program starts (the background agent, for one).
private let openSocket: ccurl_opensocket_callback = { data, _, address in
    guard let address else { return -1 }
    let socket = Glibc.socket(
        address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
    if socket >= 0, let data {
        Unmanaged<ParkedSocketClaims>.fromOpaque(data)._withUnsafeGuaranteedRef { $0.opened(socket) }
    }
    return socket
}

private let closeSocket: ccurl_closesocket_callback = { data, socket in
    if let data {
        Unmanaged<ParkedSocketClaims>.fromOpaque(data)._withUnsafeGuaranteedRef { $0.closing(socket) }
    }
    return Glibc.close(socket)
}
