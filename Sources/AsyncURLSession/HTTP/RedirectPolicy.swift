import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What URLSession does with a 3xx: whether it is a redirect at all, and the
/// request it proposes next. Pure: no I/O, no state.
enum RedirectPolicy {
    enum Evaluation {
        /// Not a status that redirects (300, 304, 305, ...), or no Location.
        case notARedirect
        /// A redirect we must not follow (unparsable Location, another scheme);
        /// the 3xx becomes the result.
        case unusable(reason: String)
        case redirect(proposed: URLRequest, isDowngrade: Bool)
    }

    static let followedStatusCodes: Set<Int> = [301, 302, 303, 307, 308]
    /// FoundationNetworking's rules, which the classic adapter keeps so code
    /// written against it behaves the same: 305 and 306 are followed too
    /// (keeping the method, as 307), and a 303 turns HEAD into GET as well.
    static let foundationNetworkingStatusCodes: Set<Int> = [301, 302, 303, 305, 306, 307, 308]

    /// Whether `status` may be a redirect under either rules (what may be
    /// held back while its hop decides).
    static func mayRedirect(_ status: Int) -> Bool {
        (301...308).contains(status) && status != 304
    }

    /// - Parameter sensitive: whether a (lowercased) header name must not
    ///   follow a redirect to another origin (the session's
    ///   `SessionConfiguration.isSensitiveHeader`).
    /// - Parameter asFoundationNetworking: FoundationNetworking's rules
    ///   (`foundationNetworkingStatusCodes`) instead of RFC 9110's and fetch's.
    static func evaluate(
        response: HTTPURLResponse, request: URLRequest, asFoundationNetworking: Bool = false,
        sensitive: (String) -> Bool
    ) -> Evaluation {
        let followed = asFoundationNetworking ? foundationNetworkingStatusCodes : followedStatusCodes
        guard followed.contains(response.statusCode),
            let location = response.value(forHTTPHeaderField: "Location")
        else { return .notARedirect }
        guard let current = request.url else { return .unusable(reason: "the request has no URL") }
        guard !location.isEmpty,
            !location.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
            let next = URL(string: location, relativeTo: current)?.absoluteURL
        else { return .unusable(reason: "the Location header is not a URL") }
        // A Unix socket URL only from a response that came over that same
        // socket: a server elsewhere must not send a client into a local
        // socket (the Docker API's, say).
        guard let scheme = next.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
                || (UnixSocketURL.isUnixScheme(scheme) && UnixSocketURL.isUnixScheme(current.scheme)
                    && next.host(percentEncoded: true) == current.host(percentEncoded: true)),
            let host = next.host, !host.isEmpty
        else {
            // Never followed and never rewritten into a request to this server.
            return .unusable(reason: "the Location has an unsupported scheme")
        }

        var proposed = request
        proposed.url = next
        let method = (request.httpMethod ?? "GET").uppercased()
        switch response.statusCode {
        case 301, 302:
            if method == "POST" { becomeGET(&proposed) }
        case 303:
            if method != "HEAD" || asFoundationNetworking { becomeGET(&proposed) }
        default:  // 307, 308 (and 305, 306) keep method and body
            break
        }
        if !sameOrigin(current, next) {
            for name in (proposed.allHTTPHeaderFields ?? [:]).keys where sensitive(name.lowercased()) {
                proposed.setValue(nil, forHTTPHeaderField: name)
            }
        }
        let isDowngrade = current.scheme?.lowercased() == "https" && scheme == "http"
        return .redirect(proposed: proposed, isDowngrade: isDowngrade)
    }

    private static func becomeGET(_ request: inout URLRequest) {
        request.httpMethod = "GET"
        request.httpBody = nil
        request.httpBodyStream = nil
        for name in ["Content-Type", "Content-Length", "Transfer-Encoding"] {
            request.setValue(nil, forHTTPHeaderField: name)
        }
    }

    /// As below; a missing URL is no origin, so it matches nothing.
    static func sameOrigin(_ a: URL?, _ b: URL?) -> Bool {
        guard let a, let b else { return false }
        return sameOrigin(a, b)
    }

    /// RFC 6454 origin: scheme, host and port (default ports made explicit).
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int) {
            let scheme = url.scheme?.lowercased() ?? ""
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            return (scheme, url.host?.lowercased() ?? "", port)
        }
        return origin(a) == origin(b)
    }
}
