internal import CCurl

/// Where and how a transfer's connection is made, when that is not simply
/// "resolve the URL's host and connect to it from anywhere": host overrides
/// (CURLOPT_RESOLVE, CURLOPT_CONNECT_TO), a Unix domain socket
/// (CURLOPT_UNIX_SOCKET_PATH, CURLOPT_ABSTRACT_UNIX_SOCKET), the local side
/// (CURLOPT_INTERFACE, CURLOPT_IPRESOLVE, CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS).
///
/// One class for all of them, built once per session by the core (and once
/// per request only for a request's own Unix socket), so a transfer that
/// uses none of them carries one nil pointer and sets no option. Part of a
/// handle's shape: a recycled handle that held a route is reset before it
/// serves a transfer with another route or none, so no option of it leaks.
///
/// The values are checked by the core before they get here.
package final class ConnectRoute: Sendable, Equatable {
    package enum IPVersion: Int, Sendable, Equatable {
        /// libcurl's default: both, with Happy Eyeballs between them.
        case any
        case v4Only
        case v6Only
    }

    /// CURLOPT_RESOLVE lines ("host:port:addr[,addr]"); nil for none.
    package let resolve: CurlStringList?
    /// CURLOPT_CONNECT_TO lines ("host:port:connect-host:connect-port").
    package let connectTo: CurlStringList?
    /// A Unix domain socket path (or an abstract name, without its NUL).
    package let unixSocketPath: String?
    package let unixSocketIsAbstract: Bool
    /// CURLOPT_INTERFACE: "if!name", "host!address" or either.
    package let localInterface: String?
    package let ipVersion: IPVersion
    /// CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS; nil keeps libcurl's 200 ms.
    package let happyEyeballsMilliseconds: Int?
    /// Try HTTP/3 first (CURL_HTTP_VERSION_3, falling back to HTTP/2 or
    /// 1.1): only set where the linked libcurl has HTTP/3.
    package let prefersHTTP3: Bool
    /// CURLOPT_ALTSVC: the file of a session's Alt-Svc cache (servers'
    /// "h3 is over there" announcements); nil for none.
    package let altSvcFile: String?

    package init(
        resolve: [String] = [], connectTo: [String] = [], unixSocketPath: String? = nil,
        unixSocketIsAbstract: Bool = false, localInterface: String? = nil, ipVersion: IPVersion = .any,
        happyEyeballsMilliseconds: Int? = nil, prefersHTTP3: Bool = false, altSvcFile: String? = nil
    ) {
        self.prefersHTTP3 = prefersHTTP3
        self.altSvcFile = altSvcFile
        self.resolve = resolve.isEmpty ? nil : CurlStringList(resolve)
        self.connectTo = connectTo.isEmpty ? nil : CurlStringList(connectTo)
        self.unixSocketPath = unixSocketPath
        self.unixSocketIsAbstract = unixSocketIsAbstract
        self.localInterface = localInterface
        self.ipVersion = ipVersion
        self.happyEyeballsMilliseconds = happyEyeballsMilliseconds
    }

    private init(_ base: ConnectRoute, unixSocketPath: String?, isAbstract: Bool) {
        resolve = base.resolve
        connectTo = base.connectTo
        self.unixSocketPath = unixSocketPath
        unixSocketIsAbstract = isAbstract
        localInterface = base.localInterface
        ipVersion = base.ipVersion
        happyEyeballsMilliseconds = base.happyEyeballsMilliseconds
        prefersHTTP3 = base.prefersHTTP3
        altSvcFile = base.altSvcFile
    }

    /// This route with another Unix socket (a request's own); the lists are
    /// shared, not copied.
    package func with(unixSocketPath: String?, isAbstract: Bool) -> ConnectRoute {
        ConnectRoute(self, unixSocketPath: unixSocketPath, isAbstract: isAbstract)
    }

    /// Whether this route changes nothing (no option to set).
    package var isEmpty: Bool {
        resolve == nil && connectTo == nil && unixSocketPath == nil && localInterface == nil && ipVersion == .any
            && happyEyeballsMilliseconds == nil && !prefersHTTP3 && altSvcFile == nil
    }

    package static func == (lhs: ConnectRoute, rhs: ConnectRoute) -> Bool {
        lhs === rhs
            || (lhs.resolve == rhs.resolve && lhs.connectTo == rhs.connectTo
                && lhs.unixSocketPath == rhs.unixSocketPath && lhs.unixSocketIsAbstract == rhs.unixSocketIsAbstract
                && lhs.localInterface == rhs.localInterface && lhs.ipVersion == rhs.ipVersion
                && lhs.happyEyeballsMilliseconds == rhs.happyEyeballsMilliseconds
                && lhs.prefersHTTP3 == rhs.prefersHTTP3 && lhs.altSvcFile == rhs.altSvcFile)
    }
}

/// An owned `curl_slist` that never changes after it is made, for the
/// options libcurl does not copy (CURLOPT_RESOLVE, CURLOPT_CONNECT_TO): it
/// must outlive every transfer that uses it, so it lives as long as the
/// requests and handle shapes that point at it.
///
/// `@unchecked Sendable`: the list is built in `init`, never mutated, read
/// only by libcurl on an engine thread, and freed in `deinit` when nothing
/// can point at it any more (a handle that had it set holds its shape, and
/// through it this list, until it is reset).
package final class CurlStringList: @unchecked Sendable, Equatable {
    let raw: UnsafeMutablePointer<curl_slist>?
    package let lines: [String]

    /// False when libcurl could not allocate every line (the transfer then
    /// fails rather than go out with part of its overrides).
    let isComplete: Bool

    init(_ lines: [String]) {
        self.lines = lines
        var list: UnsafeMutablePointer<curl_slist>?
        var complete = true
        for line in lines {
            guard let next = line.withCString({ curl_slist_append(list, $0) }) else {
                complete = false
                break
            }
            list = next
        }
        raw = list
        isComplete = complete
    }

    deinit { curl_slist_free_all(raw) }

    package static func == (lhs: CurlStringList, rhs: CurlStringList) -> Bool {
        lhs === rhs || lhs.lines == rhs.lines
    }
}
