internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a `URLRequest` plus the session's configuration into what the engine
/// sends, refusing anything unsafe before a byte leaves the process.
///
/// Why here and not in libcurl: libcurl checks neither header names nor CR/LF
/// in values (`"X-A: 1\r\nX-Injected: yes"` goes out as two headers,
/// LIBCURL-NOTES §7), and it would follow schemes we do not support.
enum RequestPreparation {
    /// URLRequest's default `timeoutInterval`; any other value is the caller's.
    static let defaultRequestTimeout: TimeInterval = 60
    /// What libcurl sends as `User-Agent` when neither the request nor the
    /// configuration names one (and what traces report then).
    static let defaultUserAgent = "AsyncURLSession"

    /// The idle timeout of a hop: the request's own `timeoutInterval` when
    /// it set one, else the configuration's.
    static func idleTimeout(of request: URLRequest, configuration: SessionConfiguration) -> TimeInterval {
        request.timeoutInterval != defaultRequestTimeout ? request.timeoutInterval : configuration.timeoutIntervalForRequest
    }

    /// - Parameter crossOrigin: this hop goes to another origin than the
    ///   task's original request (after a redirect): the configuration's
    ///   sensitive headers (`sensitiveHeaderNames`) are not added to it.
    static func transferRequest(
        for request: URLRequest, configuration: SessionConfiguration, credential: HopCredential? = nil,
        body: TransferRequest.Body, crossOrigin: Bool = false, tlsChallenges: TLSChallengeHop? = nil,
        proxyCredential: HopCredential? = nil, connectOnly: Bool = false, route: ConnectRoute? = nil,
        unixSocket: UnixSocket? = nil
    ) -> Result<TransferRequest, URLError> {
        guard let url = request.url else {
            return .failure(URLError.make(
                .unsupportedURL, url: nil, reason: "The request has no URL: give it an http or https URL."))
        }
        var urlString = withoutUserInfo(url)
        var route = route
        // The scheme from the absolute string and the host still encoded:
        // Foundation's `scheme` and `host` getters build (and percent-decode)
        // new strings, over half of this function's samples per request in
        // `perf`, for checks that need neither.
        if urlString.hasPrefixIgnoringASCIICase("http:") || urlString.hasPrefixIgnoringASCIICase("https:") {
            // A task's own socket (`SessionTask.unixSocket`) over the session's.
            if let unixSocket {
                route = (route ?? ConnectRoute()).with(unixSocketPath: unixSocket.path, isAbstract: unixSocket.isAbstract)
            }
        } else if urlString.hasPrefixIgnoringASCIICase("http+unix:") || urlString.hasPrefixIgnoringASCIICase("https+unix:") {
            switch UnixSocketURL.split(urlString) {
            case .success(let split):
                urlString = split.curlURL
                route = (route ?? ConnectRoute()).with(unixSocketPath: split.socket.path, isAbstract: split.socket.isAbstract)
            case .failure(let unusable):
                return .failure(URLError.make(.badURL, url: urlString, reason: unusable.reason))
            }
        } else {
            return .failure(URLError.make(
                .unsupportedURL, url: urlString,
                reason: "Only http, https, http+unix and https+unix URLs are supported, not '\(url.scheme ?? "")'."))
        }
        guard let host = url.host(percentEncoded: true), !host.isEmpty else {
            return .failure(URLError.make(.badURL, url: urlString, reason: "The URL has no host."))
        }
        if let route, let problem = IPVersionCheck.problem(host: host, route: route) {
            return .failure(URLError.make(.cannotConnectToHost, url: urlString, reason: problem))
        }
        let method = request.httpMethod ?? "GET"
        guard HeaderValidation.isToken(method) else {
            return .failure(URLError.make(
                .badURL, url: urlString,
                reason: "The HTTP method '\(method.debugDescription)' is not a valid token (RFC 9110 §9.1)."))
        }

        var headers: [(name: String, value: String)] = []
        var acceptEncoding: String? = ""
        var hasUserAgent = false
        let hasBody: Bool
        if case .none = body { hasBody = false } else { hasBody = true }

        // Request headers first, then configuration headers the request lacks.
        let requestFields = request.allHTTPHeaderFields ?? [:]
        var seen = Set<String>()
        var fields: [(String, String)] = requestFields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        for (name, _) in fields { seen.insert(name.lowercased()) }
        for (name, value) in configuration.httpAdditionalHeaders.sorted(by: { $0.key < $1.key }) {
            let lowercased = name.lowercased()
            guard !seen.contains(lowercased) else { continue }
            // Credentials the session adds are for the origin the task was
            // made for, never for one a redirect leads to.
            if crossOrigin, configuration.isSensitiveHeader(lowercased) { continue }
            fields.append((name, value))
        }

        for (name, value) in fields {
            if let problem = HeaderValidation.problem(name: name, value: value) {
                return .failure(URLError.make(.badURL, url: urlString, reason: problem))
            }
            switch name.lowercased() {
            case "accept-encoding":
                // libcurl sends this value and decodes what it names.
                acceptEncoding = value
                continue
            case "content-length", "transfer-encoding":
                // Derived from the body by libcurl; a second copy would make
                // the request ambiguous (request smuggling).
                if hasBody { continue }
            case "user-agent":
                hasUserAgent = true
            default:
                break
            }
            headers.append((name: name, value: value))
        }

        // The jar's cookies, unless the request brings its own Cookie
        // header (sent as given) or opts out. An empty jar costs one load.
        if let jar = configuration.cookieJar, !jar.isEmpty, configuration.httpShouldSetCookies,
            request.httpShouldHandleCookies, !fields.contains(where: { $0.0.equalsIgnoringASCIICase("Cookie") }),
            let cookies = jar.cookieHeader(for: url)
        {
            if let problem = HeaderValidation.problem(name: "Cookie", value: cookies) {
                return .failure(URLError.make(.badURL, url: urlString, reason: problem))
            }
            headers.append((name: "Cookie", value: cookies))
        }

        let tlsVersions = TLSVersionBounds(
            minimum: configuration.tlsMinimumSupportedVersion.flatMap { TLSVersionBounds.Version(rawValue: $0.rawValue) },
            maximum: configuration.tlsMaximumSupportedVersion.flatMap { TLSVersionBounds.Version(rawValue: $0.rawValue) })
        if let minimum = tlsVersions.minimum, let maximum = tlsVersions.maximum, minimum > maximum,
            urlString.hasPrefixIgnoringASCIICase("https:")
        {
            return .failure(URLError.make(
                .secureConnectionFailed, url: urlString,
                reason: "The configuration's minimum TLS version is above its maximum: "
                    + "set tlsMinimumSupportedVersion at or below tlsMaximumSupportedVersion."))
        }

        // The configuration's pins stand whatever a trust answer said; an
        // answer's own pin keeps its connections apart from verified ones.
        let pinnedPublicKey = (configuration.pinnedPublicKeys.isEmpty
            ? nil : pinnedPublicKey(for: url, in: configuration.pinnedPublicKeys)) ?? tlsChallenges?.pin
        // An identity a challenge's answer chose, else the configuration's.
        let identity = tlsChallenges?.identity ?? configuration.clientIdentity
        let clientCertificate = identity != nil && urlString.hasPrefixIgnoringASCIICase("https:")
            ? identity?.certificate : nil

        let idle = idleTimeout(of: request, configuration: configuration)
        return .success(TransferRequest(
            url: urlString,
            method: method,
            headers: headers,
            body: body,
            idleTimeout: idle,
            resourceTimeout: configuration.timeoutIntervalForResource,
            connectTimeout: configuration.timeoutIntervalForConnect,
            trustRootsPEM: configuration.tlsTrustRootsPEM,
            tlsVersions: tlsVersions,
            pinnedPublicKey: pinnedPublicKey,
            clientCertificate: clientCertificate,
            tlsChallenges: tlsChallenges?.check,
            // A Unix socket is the way to the server: no proxy in between.
            proxy: route?.unixSocketPath != nil
                ? nil : configuration.proxy.flatMap { proxyRoute(for: url, in: $0, credential: proxyCredential) },
            connectOnly: connectOnly,
            decompressionLimit: configuration.maximumDecompressionRatio > 0
                ? DecompressionLimit(
                    ratio: configuration.maximumDecompressionRatio,
                    floor: Int64(max(0, configuration.decompressionLimitFloor)))
                : nil,
            acceptEncoding: acceptEncoding,
            userAgent: hasUserAgent ? nil : defaultUserAgent,
            authentication: credential.flatMap(authentication(for:)),
            route: route))
    }

    /// libcurl's CURLOPT_PINNEDPUBLICKEY value for an https URL whose host
    /// has pins ("sha256//A;sha256//B"); nil otherwise.
    static func pinnedPublicKey(for url: URL, in pins: [String: [String]]) -> String? {
        guard url.scheme?.lowercased() == "https", let host = url.host?.lowercased() else { return nil }
        let hashes = pins.first { $0.key.lowercased() == host }?.value ?? []
        guard !hashes.isEmpty else { return nil }
        return hashes.map { hash in
            let trimmed = hash.trimmingCharacters(in: .whitespaces)
            return trimmed.hasPrefix("sha256//") ? trimmed : "sha256//" + trimmed
        }.joined(separator: ";")
    }

    /// The proxy a request to `url` goes through, with the credential for
    /// it; nil when the configuration reaches `url` directly.
    static func proxyRoute(for url: URL, in proxy: ProxyConfiguration, credential: HopCredential?) -> ProxyRoute? {
        guard let (server, isSOCKS) = proxy.route(for: url) else { return nil }
        let route = (isSOCKS ? "socks5h://" : "http://") + server.description
        guard let credential, let user = credential.credential.user else { return ProxyRoute(url: route) }
        return ProxyRoute(
            url: route, user: user, password: credential.credential.password,
            scheme: authentication(for: credential)?.scheme)
    }

    /// libcurl would send a URL's user:password preemptively as Basic; URLSession
    /// uses them only to answer a challenge (default handling), so they are
    /// taken out of what libcurl sees.
    static func withoutUserInfo(_ url: URL) -> String {
        guard url.user(percentEncoded: true) != nil || url.password(percentEncoded: true) != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return url.absoluteString }
        components.user = nil
        components.password = nil
        return components.string ?? url.absoluteString
    }

    static func authentication(for credential: HopCredential) -> TransferRequest.Authentication? {
        guard let user = credential.credential.user else { return nil }
        let scheme: TransferRequest.Authentication.Scheme
        switch credential.method {
        case NSURLAuthenticationMethodHTTPBasic: scheme = .basic
        case NSURLAuthenticationMethodHTTPDigest: scheme = .digest
        case NSURLAuthenticationMethodNTLM: scheme = .ntlm
        case NSURLAuthenticationMethodNegotiate: scheme = .negotiate
        default: return nil
        }
        return TransferRequest.Authentication(
            user: user, password: credential.credential.password ?? "", scheme: scheme)
    }
}
