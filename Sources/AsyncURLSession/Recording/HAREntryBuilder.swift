import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a task's transactions, with what its capture saw of each hop,
/// into HAR entries: secrets redacted as the log redacts them, bodies cut
/// at the recorder's limit.
struct HAREntryBuilder {
    let options: HARRecorder.Options
    /// Lowercased names whose values are redacted (empty when not redacting).
    private let redactedNames: Set<String>
    private var sent: [HARTaskCapture.SentRequest?]
    private var received: [HARTaskCapture.ReceivedResponse?]

    init(
        options: HARRecorder.Options, sensitiveHeaderNames: Set<String>, sent: [HARTaskCapture.SentRequest],
        received: [HARTaskCapture.ReceivedResponse]
    ) {
        self.options = options
        redactedNames = options.redactsSecrets
            ? TaskLog.alwaysRedacted.union(sensitiveHeaderNames.map { $0.lowercased() })
                .union(options.redactedHeaderNames.map { $0.lowercased() })
            : []
        self.sent = sent
        self.received = received
    }

    mutating func entry(for transaction: TransactionMetrics, error: URLError?) -> HAR.Entry {
        let request = self.request(for: transaction)
        let response = self.response(for: transaction)
        let timings = HAR.Timings(transaction)
        var failure = error?.localizedDescription
        if transaction.response == nil, response.status == 0, failure == nil { failure = "No response." }
        return HAR.Entry(
            startedDateTime: transaction.fetchStartDate.formatted(Self.dateStyle),
            time: HAR.Timings.rounded(timings.total), request: request, response: response, timings: timings,
            serverIPAddress: transaction.remoteAddress, connection: transaction.localPort.map(String.init),
            error: failure, comment: transaction.fetchType == .localCache ? "Answered by the response cache." : nil)
    }

    private static let dateStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    // MARK: Request

    private mutating func request(for transaction: TransactionMetrics) -> HAR.Request {
        let url = transaction.request.url?.absoluteString ?? ""
        // Nothing was sent for an answer of the response cache.
        let wire = transaction.fetchType == .localCache ? nil : takeSent(url: url)
        let headers = wire?.headers
            ?? (transaction.request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let sentURL = wire?.url ?? url
        let shownURL = options.redactsSecrets ? TaskLog.redacted(sentURL) : sentURL
        // From the URL as sent: the redacted one may no longer parse.
        let query = URLComponents(string: sentURL)?.queryItems?.map { HAR.NameValue(name: $0.name, value: $0.value ?? "") }
        var postData: HAR.PostData?
        if let body = wire?.body, !body.isEmpty {
            let (text, encoding) = HAR.Content.encode(body)
            let mimeType = headers.first { $0.name.lowercased() == "content-type" }?.value ?? "application/octet-stream"
            postData = HAR.PostData(
                mimeType: mimeType, text: text, encoding: encoding,
                comment: transaction.countOfRequestBodyBytesSent > body.count ? "Cut at \(body.count) bytes." : nil)
        }
        return HAR.Request(
            method: wire?.method ?? transaction.request.httpMethod ?? "GET", url: shownURL,
            httpVersion: Self.httpVersion(transaction.networkProtocolName), headers: redacted(headers),
            queryString: query ?? [], postData: postData,
            headersSize: transaction.countOfRequestHeaderBytesSent > 0 ? Int(transaction.countOfRequestHeaderBytesSent) : -1,
            bodySize: Int(transaction.countOfRequestBodyBytesSent))
    }

    /// The first hop not yet matched that went to `url`, or else the first
    /// not yet matched (a URL libcurl spelled differently).
    private mutating func takeSent(url: String) -> HARTaskCapture.SentRequest? {
        guard let index = sent.firstIndex(where: { $0?.url == url }) ?? sent.firstIndex(where: { $0 != nil }) else {
            return nil
        }
        defer { sent[index] = nil }
        return sent[index]
    }

    // MARK: Response

    private mutating func response(for transaction: TransactionMetrics) -> HAR.Response {
        guard let response = transaction.response else {
            if let index = received.firstIndex(where: { $0?.absorbedFields != nil }), let absorbed = received[index] {
                received[index] = nil
                return HAR.Response(
                    status: absorbed.status, statusText: Self.reasonPhrase(absorbed.status),
                    httpVersion: Self.httpVersion(transaction.networkProtocolName),
                    headers: redacted(absorbed.absorbedFields ?? []),
                    content: HAR.Content(
                        size: 0, mimeType: "x-unknown",
                        comment: "Revalidated the stored response, which answers in the next entry."),
                    headersSize: transaction.countOfResponseHeaderBytesReceived > 0
                        ? Int(transaction.countOfResponseHeaderBytesReceived) : -1,
                    bodySize: 0)
            }
            return HAR.Response(
                status: 0, statusText: "", httpVersion: "", headers: [], content: HAR.Content(size: 0, mimeType: "x-unknown"))
        }
        var body: HARTaskCapture.ReceivedResponse?
        if let index = received.firstIndex(where: { $0?.status == response.statusCode && $0?.absorbedFields == nil }) {
            body = received[index]
            received[index] = nil
        }
        var headers: [(name: String, value: String)] = []
        for (name, value) in response.allHeaderFields {
            headers.append((name: "\(name)", value: "\(value)"))
        }
        headers.sort { $0.name < $1.name }
        let mimeType = response.value(forHTTPHeaderField: "Content-Type") ?? "x-unknown"
        var content = HAR.Content(size: body?.size ?? 0, mimeType: mimeType)
        if let body, !body.body.isEmpty {
            (content.text, content.encoding) = HAR.Content.encode(body.body)
            if body.size > body.body.count { content.comment = "Cut at \(body.body.count) of \(body.size) bytes." }
        }
        let wireBodySize = Int(transaction.countOfResponseBodyBytesReceived)
        if wireBodySize > 0, content.size > wireBodySize { content.compression = content.size - wireBodySize }
        var redirectURL = ""
        if (300..<400).contains(response.statusCode), let location = response.value(forHTTPHeaderField: "Location") {
            redirectURL = URL(string: location, relativeTo: response.url)?.absoluteString ?? location
        }
        return HAR.Response(
            status: response.statusCode, statusText: Self.reasonPhrase(response.statusCode),
            httpVersion: Self.httpVersion(transaction.networkProtocolName), headers: redacted(headers), content: content,
            redirectURL: options.redactsSecrets ? TaskLog.redacted(redirectURL) : redirectURL,
            headersSize: transaction.countOfResponseHeaderBytesReceived > 0
                ? Int(transaction.countOfResponseHeaderBytesReceived) : -1,
            bodySize: transaction.fetchType == .localCache ? 0 : wireBodySize)
    }

    // MARK: Shared

    private func redacted(_ headers: [(name: String, value: String)]) -> [HAR.NameValue] {
        headers.map { field in
            HAR.NameValue(
                name: field.name,
                value: redactedNames.contains(field.name.lowercased()) ? TaskLog.redactedValue : field.value)
        }
    }

    /// HAR spells versions as a request line does.
    static func httpVersion(_ alpn: String?) -> String {
        switch alpn?.lowercased() {
        case "h2", "http/2", "http/2.0": "HTTP/2"
        case "http/1.0": "HTTP/1.0"
        case "h3", "http/3": "HTTP/3"
        default: "HTTP/1.1"
        }
    }

    /// RFC 9110's reason phrases (the wire's own is not kept).
    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}
