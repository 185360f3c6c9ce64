internal import CCurl
import Foundation

extension Transfer {
    /// The options of a transfer whose connection is routed (see
    /// `ConnectRoute`). Set on a reset handle only: the route is part of the
    /// handle's shape, so a handle that holds it serves only transfers with
    /// an equal route, and any other transfer gets a reset handle.
    ///
    /// CURLOPT_RESOLVE's entries go further than the handle: libcurl adds
    /// them to the DNS cache of the handle's share (here one per session and
    /// engine thread, `MultiSession`) as permanent entries that neither
    /// `curl_easy_reset` nor the cache's timeout removes. That is why host
    /// overrides are a session's, never a request's: every transfer of the
    /// session has them anyway, and another session has its own cache.
    func configureRoute(_ route: ConnectRoute, _ check: (CURLcode) -> Void) {
        let handle = easy
        if let resolve = route.resolve {
            check(resolve.isComplete ? ccurl_easy_setopt_slist(handle.raw, CURLOPT_RESOLVE, resolve.raw) : CURLE_OUT_OF_MEMORY)
        }
        if let connectTo = route.connectTo {
            check(connectTo.isComplete
                ? ccurl_easy_setopt_slist(handle.raw, CURLOPT_CONNECT_TO, connectTo.raw) : CURLE_OUT_OF_MEMORY)
        }
        if let path = route.unixSocketPath {
            // libcurl reuses a connection only for a transfer with the same
            // socket path and kind (url.c ConnectionExists), never a TCP one.
            check(handle.set(route.unixSocketIsAbstract ? CURLOPT_ABSTRACT_UNIX_SOCKET : CURLOPT_UNIX_SOCKET_PATH, path))
        }
        if let interface = route.localInterface {
            check(handle.set(CURLOPT_INTERFACE, interface))
        }
        switch route.ipVersion {
        case .any: break
        case .v4Only: check(handle.set(CURLOPT_IPRESOLVE, Int(CURL_IPRESOLVE_V4)))
        case .v6Only: check(handle.set(CURLOPT_IPRESOLVE, Int(CURL_IPRESOLVE_V6)))
        }
        if let delay = route.happyEyeballsMilliseconds {
            check(handle.set(CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS, delay))
        }
        if let file = route.altSvcFile {
            // Which announcements are followed: to h3, h2 and http/1.1 alike.
            check(handle.set(CURLOPT_ALTSVC_CTRL, Int(CURLALTSVC_H1 | CURLALTSVC_H2 | CURLALTSVC_H3)))
            check(handle.set(CURLOPT_ALTSVC, file))
        }
        // Only https can go over QUIC; a connect-only transfer (WebSocket,
        // stream) needs TCP and sets HTTP/1.1 itself after this.
        if route.prefersHTTP3, request.url.hasPrefixIgnoringASCIICase("https:"), !request.connectOnly {
            check(handle.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_3)))
        }
    }

    /// What a failed connection over the route was, in words libcurl does
    /// not use (its message names "localhost port 80" for a Unix socket, and
    /// not the interface it could not bind); nil for any other failure.
    func routeFailureMessage(_ code: CURLcode) -> String? {
        guard let route = request.route else { return nil }
        let libcurl = easy.errorMessage ?? String(cString: curl_easy_strerror(code))
        if code == CURLE_COULDNT_CONNECT, let path = route.unixSocketPath {
            let kind = route.unixSocketIsAbstract ? "abstract Unix socket @" : "Unix socket "
            return "Cannot connect to the \(kind)\(path)\(Self.unixSocketProblem(path, abstract: route.unixSocketIsAbstract)): \(libcurl)"
        }
        if code == CURLE_INTERFACE_FAILED, let interface = route.localInterface {
            return "Cannot make the connection from the local endpoint '\(interface.split(separator: "!").last ?? "")' "
                + "(not an interface or address of this machine, or not permitted): \(libcurl)"
        }
        return nil
    }

    /// Why a socket path cannot be connected to, when the file system says.
    private static func unixSocketProblem(_ path: String, abstract: Bool) -> String {
        guard !abstract else { return " (no process listens on that name)" }
        var info = stat()
        guard stat(path, &info) == 0 else {
            return errno == ENOENT ? " (no such file)" : " (\(String(cString: strerror(errno))))"
        }
        return (info.st_mode & S_IFMT) == S_IFSOCK ? "" : " (not a socket)"
    }
}
