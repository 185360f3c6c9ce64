import Foundation

/// `http+unix://` and `https+unix://` URLs, as async-http-client spells
/// them: the host is the socket's percent-encoded path
/// (`http+unix://%2Fvar%2Frun%2Fdocker.sock/v1.43/info`); a host whose
/// decoded path begins with NUL (`%00name`) is a Linux abstract socket.
///
/// libcurl sees `http://localhost/v1.43/info` (or https) with the socket
/// as CURLOPT_UNIX_SOCKET_PATH: the Host header says `localhost`, which is
/// what curl sends with `--unix-socket` and what Docker and other socket
/// servers accept. Set a Host header on the request to send another. Over
/// https+unix the server's certificate must be valid for `localhost`.
enum UnixSocketURL {
    struct Split: Equatable {
        let socket: UnixSocket
        /// The URL for libcurl: the same path, query and scheme (without
        /// "+unix") on `localhost`.
        let curlURL: String
    }

    /// Whether `scheme` (any case) is one of ours.
    static func isUnixScheme(_ scheme: String?) -> Bool {
        guard let scheme = scheme?.lowercased() else { return false }
        return scheme == "http+unix" || scheme == "https+unix"
    }

    /// Why a URL is unusable.
    struct Unusable: Error {
        let reason: String
    }

    /// Splits an absolute http+unix or https+unix URL.
    static func split(_ url: String) -> Result<Split, Unusable> {
        guard let schemeEnd = url.range(of: "://") else { return .failure(Unusable(reason: "The URL has no '//' authority.")) }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        let base: String
        switch scheme {
        case "http+unix": base = "http://localhost"
        case "https+unix": base = "https://localhost"
        default: return .failure(Unusable(reason: "'\(scheme)' is not http+unix or https+unix."))
        }
        let afterScheme = url[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
        var authority = afterScheme[..<authorityEnd]
        // userinfo was taken out already; a port means nothing on a socket.
        if let colon = authority.lastIndex(of: ":"), authority[authority.index(after: colon)...].allSatisfy(\.isNumber) {
            authority = authority[..<colon]
        }
        guard !authority.isEmpty, let decoded = String(authority).removingPercentEncoding, !decoded.isEmpty else {
            return .failure(Unusable(reason:
                "An http+unix URL's host is the socket's percent-encoded path (http+unix://%2Fvar%2Frun%2Fdocker.sock/path)."))
        }
        let socket: UnixSocket
        do {
            socket = decoded.utf8.first == 0 ? try .abstract(String(decoded.dropFirst())) : try .path(decoded)
        } catch let problem as UnixSocket.Problem {
            return .failure(Unusable(reason: "The URL's Unix socket is unusable: \(problem.reason)"))
        } catch {
            return .failure(Unusable(reason: "The URL's Unix socket is unusable."))
        }
        let rest = afterScheme[authorityEnd...]
        return .success(Split(socket: socket, curlURL: base + (rest.first == "/" ? "" : "/") + rest))
    }
}
