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

    /// The same hooks for a session with pool metrics: they also count its
    /// open connections (libcurl closes a connection with the hooks and data
    /// of the handle that opened it, so every socket is counted by the
    /// session it belongs to). The handle keeps the tally alive as long as
    /// libcurl may call them.
    static func install(on handle: EasyHandle, counting tally: ConnectionPoolTally) {
        let data = Unmanaged.passUnretained(tally).toOpaque()
        _ = ccurl_easy_setopt_opensocket_function(handle.raw, openCountedSocket)
        _ = handle.set(CURLOPT_OPENSOCKETDATA, pointer: data)
        _ = ccurl_easy_setopt_closesocket_function(handle.raw, closeCountedSocket)
        _ = handle.set(CURLOPT_CLOSESOCKETDATA, pointer: data)
        handle.socketHooksInstalled = true
        handle.socketHookOwner = tally
    }
}

// The data is the engine thread's claims, alive as long as its loop, so no
// retain around the call. SOCK_CLOEXEC as well: a connection must not leak
// into a process the program starts (the background agent, for one).
private let openSocket: ccurl_opensocket_callback = { data, _, address in
    let socket = openCloseOnExec(address)
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

private func openCloseOnExec(_ address: UnsafeMutablePointer<curl_sockaddr>?) -> Int32 {
    guard let address else { return -1 }
    return Glibc.socket(
        address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
}

// The data is the session's tally, which the handle (and its multi
// session) keeps alive.
private let openCountedSocket: ccurl_opensocket_callback = { data, _, address in
    let socket = openCloseOnExec(address)
    if socket >= 0, let data {
        Unmanaged<ConnectionPoolTally>.fromOpaque(data)._withUnsafeGuaranteedRef { $0.opened(socket) }
    }
    return socket
}

private let closeCountedSocket: ccurl_closesocket_callback = { data, socket in
    if let data {
        Unmanaged<ConnectionPoolTally>.fromOpaque(data)._withUnsafeGuaranteedRef { $0.closing(socket) }
    }
    return Glibc.close(socket)
}
