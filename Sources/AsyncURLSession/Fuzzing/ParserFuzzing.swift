internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The core's parsers of untrusted bytes, for the fuzz harness
/// (`Sources/fuzz-parsers`). `package`: only this package's targets see it.
/// Each entry takes any bytes and must neither crash nor hang; the few
/// invariants worth checking are preconditions here, so a fuzzer reports
/// a broken one as a crash.
package enum ParserFuzzing {
    package static let parsers = [
        "set-cookie", "www-authenticate", "location", "multipart", "resume-data", "cache-headers",
        "request-headers", "cookie-file", "websocket-frames",
    ]

    /// Runs parser `name` over `data`. Returns false for an unknown name.
    @discardableResult
    package static func run(_ name: String, _ data: Data) -> Bool {
        let text = String(decoding: data, as: UTF8.self)
        switch name {
        case "set-cookie": setCookie(text)
        case "www-authenticate": _ = AuthenticationChallenge.parse(text.split(separator: "\n").map(String.init))
        case "location": location(text)
        case "multipart": multipart(data)
        case "resume-data": _ = ResumeData.decode(data)
        case "cache-headers": cacheHeaders(text)
        case "request-headers": requestHeaders(text)
        case "cookie-file": cookieFile(data)
        case "websocket-frames": webSocketFrames(data)
        default: return false
        }
        return true
    }

    /// Set-Cookie lines through the parser and a jar's rules (public
    /// suffixes, Domain, Path, caps), then read back for a request.
    private static func setCookie(_ text: String) {
        let lines = text.split(separator: "\n").map(String.init)
        for line in lines { _ = ParsedSetCookie.parse(line) }
        let jar = CookieJar(publicSuffixes: .system)
        let url = URL(string: "https://www.example.co.uk/a/b")!
        jar.storeCookies(fromSetCookieFields: lines, for: url, acceptPolicy: .always)
        let sent = jar.cookies(for: url)
        precondition(sent.count <= CookieJar.maximumPerDomain)
    }

    /// A 302 whose Location is the text, resolved against a request.
    private static func location(_ text: String) {
        let url = URL(string: "https://example.org/dir/page?q=1")!
        guard let response = HTTPURLResponse(url: url, statusCode: 302, httpVersion: "HTTP/1.1", headerFields: ["Location": text])
        else { return }
        var request = URLRequest(url: url)
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        if case .redirect(let proposed, _) = RedirectPolicy.evaluate(
            response: response, request: request, sensitive: { $0 == "authorization" })
        {
            let scheme = proposed.url?.scheme?.lowercased()
            precondition(scheme == "http" || scheme == "https", "a redirect to another scheme was proposed")
            // Hosts compare without case; https's port is 443 written or not.
            let sameOrigin = proposed.url?.host?.lowercased() == "example.org" && scheme == "https"
                && (proposed.url?.port ?? 443) == 443
            if !sameOrigin {
                precondition(
                    proposed.value(forHTTPHeaderField: "Authorization") == nil,
                    "credentials crossed origins: \(text.debugDescription) -> \(proposed.url?.absoluteString ?? "-")")
            }
        }
    }

    /// The first byte picks where the body is cut in two chunks.
    /// A server's bytes through the frame parser and message assembler, cut
    /// where the first byte says (as a socket would split them). Checks: no
    /// frame or message is longer than the limit, and the bytes taken never
    /// exceed the bytes given.
    private static func webSocketFrames(_ data: Data) {
        let limit = 4096
        var parser = WebSocketFrameParser(maximumFrameSize: limit)
        var assembler = WebSocketMessageAssembler(maximumMessageSize: limit)
        let cut = data.isEmpty ? 0 : Int(data[data.startIndex]) % (data.count + 1)
        var payloadBytes = 0
        do {
            for piece in [data.prefix(cut), data.dropFirst(cut)] {
                parser.append(Data(piece))
                while let frame = try parser.next() {
                    precondition(frame.payload.count <= limit, "a frame over the limit was returned")
                    payloadBytes += frame.payload.count
                    switch try assembler.receive(frame) {
                    case .text(let text)?: precondition(text.utf8.count <= limit, "a message over the limit")
                    case .binary(let bytes)?: precondition(bytes.count <= limit, "a message over the limit")
                    default: break
                    }
                }
            }
        } catch {
            precondition((1002...1009).contains(error.closeCode), "an error with an unexpected close code")
        }
        precondition(payloadBytes <= data.count, "the parser returned more payload than it was given")
    }

    private static func multipart(_ data: Data) {
        guard var parser = MultipartReplaceParser(contentType: "multipart/x-mixed-replace; boundary=frame") else { return }
        let cut = data.isEmpty ? 0 : Int(data[data.startIndex]) % (data.count + 1)
        var bodyBytes = 0
        for piece in [data.prefix(cut), data.dropFirst(cut)] {
            piece.withUnsafeBytes { bytes in
                for output in parser.feed(bytes) {
                    if case .body(let body) = output { bodyBytes += body.count }
                }
            }
        }
        precondition(bodyBytes <= data.count, "the parser produced more body than it was given")
    }

    /// Lines "Name: value" as a stored response's fields: Cache-Control,
    /// dates, Age and Vary through the freshness and storage rules.
    private static func cacheHeaders(_ text: String) {
        var fields = CachedHeaderFields()
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields.append(
                name: String(line[..<colon]).trimmingCharacters(in: .whitespaces),
                value: String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        let now = Date()
        let stored = CachedResponse(
            url: URL(string: "https://example.org/")!, statusCode: 200, httpVersion: "HTTP/1.1", fields: fields,
            data: Data(), requestDate: now, responseDate: now)
        let freshness = CacheFreshness(stored, now: now)
        precondition(!freshness.lifetime.isNaN && !freshness.age.isNaN)
        let request = URLRequest(url: stored.url)
        _ = CacheRules.mayStore(statusCode: 200, fields: fields, request: request, authenticated: false)
        _ = CacheRules.isReusable(fields: fields, statusCode: 200)
        _ = CacheRules.varyValues(of: fields, request: request)
        _ = CacheRules.plan(for: request, policy: .useProtocolCachePolicy, stored: stored, now: now)
    }

    /// A request built from the text: the first line is the method, lines
    /// "Name: value" are the request's headers, lines "+Name: value" the
    /// configuration's. Whatever preparation accepts must be safe to put on
    /// the wire: tokens for method and names, no CR, LF or NUL in a value,
    /// one framing of the body.
    private static func requestHeaders(_ text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var request = URLRequest(url: URL(string: "https://example.org/a")!)
        request.httpMethod = lines.first.map(String.init) ?? "GET"
        var configuration = SessionConfiguration.ephemeral
        configuration.cookieJar = nil
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            var name = String(line[..<colon])
            let value = String(line[line.index(after: colon)...])
            if name.hasPrefix("+") {
                name.removeFirst()
                configuration.httpAdditionalHeaders[name] = value
            } else {
                request.addValue(value, forHTTPHeaderField: name)
            }
        }
        let body: TransferRequest.Body = text.count % 2 == 0 ? .none : .data(Data("body".utf8))
        for crossOrigin in [false, true] {
            guard case .success(let prepared) = RequestPreparation.transferRequest(
                for: request, configuration: configuration, body: body, crossOrigin: crossOrigin)
            else { continue }
            precondition(HeaderValidation.isToken(prepared.method), "a method that is not a token was accepted")
            for (name, value) in prepared.headers {
                precondition(HeaderValidation.isToken(name), "a header name that is not a token was accepted")
                precondition(
                    !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }),
                    "CR, LF or NUL reached a header value")
                if case .data = body {
                    let lowercased = name.lowercased()
                    precondition(lowercased != "content-length" && lowercased != "transfer-encoding",
                        "a second framing of the body was kept")
                }
            }
            if let encoding = prepared.acceptEncoding {
                precondition(!encoding.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }))
            }
        }
    }

    /// A cookie file's bytes: whatever the decoder accepts must be a cookie
    /// a response could have set, and must make a Cookie header that is safe.
    private static func cookieFile(_ data: Data) {
        let policy = CookiePolicy(publicSuffixes: .system)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        guard let cookies = CookieFile.decode(data, now: now, policy: policy) else { return }
        for cookie in cookies {
            precondition(policy.isPlausible(cookie) && cookie.expires != nil, "an implausible cookie was loaded")
        }
        for url in ["https://www.example.co.uk/a/b", "http://example.org/", "https://localhost/"] {
            let target = URL(string: url)!
            let matched = cookies.filter { CookiePolicy.matches($0, url: target, now: now) }
            if let header = CookiePolicy.header(for: matched) {
                precondition(HeaderValidation.problem(name: "Cookie", value: header) == nil,
                    "a loaded cookie made an unsafe Cookie header")
            }
        }
    }
}
