import Foundation

/// The HTTP Archive format, version 1.2 (http://www.softwareishard.com/blog/har-12-spec/):
/// what `HARRecorder` writes, and what `HARReplay` (AsyncURLSessionTesting)
/// reads, ours or a browser's.
///
/// Only the fields this library writes or reads are modelled. Decoding
/// ignores the rest (a browser's `_initiator`, `_priority`, `pages`...),
/// and fields a browser may leave out are optional, so any conforming file
/// decodes.
public enum HAR {
    /// The whole file: `{"log": {...}}`.
    public struct Document: Codable, Sendable {
        public var log: Log

        public init(log: Log) {
            self.log = log
        }

        /// Reads a HAR file (ours or a browser's).
        public static func read(from url: URL) throws -> Document {
            try JSONDecoder().decode(Document.self, from: Data(contentsOf: url))
        }
    }

    public struct Log: Codable, Sendable {
        public var version: String
        public var creator: Creator
        public var entries: [Entry]

        public init(version: String = "1.2", creator: Creator = .asyncURLSession, entries: [Entry] = []) {
            self.version = version
            self.creator = creator
            self.entries = entries
        }
    }

    public struct Creator: Codable, Sendable {
        public var name: String
        public var version: String

        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }

        public static let asyncURLSession = Creator(name: "AsyncURLSession", version: "1.0")
    }

    /// One request/response exchange: one hop of a task (each redirect and
    /// each retry is an entry of its own).
    public struct Entry: Codable, Sendable {
        /// ISO 8601, with milliseconds.
        public var startedDateTime: String
        /// Milliseconds: the sum of `timings`' values other than -1 and `ssl`
        /// (which HAR 1.2 counts inside `connect`).
        public var time: Double
        public var request: Request
        public var response: Response
        /// Required by HAR 1.2; this library writes it empty.
        public var cache: Cache
        public var timings: Timings
        public var serverIPAddress: String?
        /// Tells the connections of the file apart: the local port of the
        /// hop's TCP connection (unique among the connections open at once).
        public var connection: String?
        /// Why the hop failed (a browser's `_error`); absent on success.
        public var error: String?
        public var comment: String?

        enum CodingKeys: String, CodingKey {
            case startedDateTime, time, request, response, cache, timings, serverIPAddress, connection, comment
            case error = "_error"
        }

        public init(
            startedDateTime: String, time: Double, request: Request, response: Response, timings: Timings,
            serverIPAddress: String? = nil, connection: String? = nil, error: String? = nil, comment: String? = nil
        ) {
            self.startedDateTime = startedDateTime
            self.time = time
            self.request = request
            self.response = response
            self.cache = Cache()
            self.timings = timings
            self.serverIPAddress = serverIPAddress
            self.connection = connection
            self.error = error
            self.comment = comment
        }
    }

    public struct Cache: Codable, Sendable {
        public init() {}
    }

    /// A header, query parameter or cookie.
    public struct NameValue: Codable, Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public struct Request: Codable, Sendable {
        public var method: String
        public var url: String
        public var httpVersion: String
        public var cookies: [NameValue]
        public var headers: [NameValue]
        public var queryString: [NameValue]
        public var postData: PostData?
        /// Bytes, -1 when unknown.
        public var headersSize: Int
        /// Bytes, -1 when unknown.
        public var bodySize: Int

        public init(
            method: String, url: String, httpVersion: String, headers: [NameValue], queryString: [NameValue] = [],
            postData: PostData? = nil, headersSize: Int = -1, bodySize: Int = -1, cookies: [NameValue] = []
        ) {
            self.method = method
            self.url = url
            self.httpVersion = httpVersion
            self.cookies = cookies
            self.headers = headers
            self.queryString = queryString
            self.postData = postData
            self.headersSize = headersSize
            self.bodySize = bodySize
        }

        enum CodingKeys: String, CodingKey {
            case method, url, httpVersion, cookies, headers, queryString, postData, headersSize, bodySize
        }

        public init(from decoder: any Decoder) throws {
            // A browser may leave out what it did not see: defaults, not failures.
            let container = try decoder.container(keyedBy: CodingKeys.self)
            method = try container.decode(String.self, forKey: .method)
            url = try container.decode(String.self, forKey: .url)
            queryString = try container.decodeIfPresent([NameValue].self, forKey: .queryString) ?? []
            postData = try container.decodeIfPresent(PostData.self, forKey: .postData)
            (httpVersion, cookies, headers, headersSize, bodySize) = try MessageFields(from: decoder).values
        }
    }

    /// A request's body: `text` (base64 when `encoding` is "base64", an
    /// addition some tools make for bytes that are not text).
    public struct PostData: Codable, Sendable {
        public var mimeType: String
        public var text: String
        public var encoding: String?
        public var comment: String?

        public init(mimeType: String, text: String, encoding: String? = nil, comment: String? = nil) {
            self.mimeType = mimeType
            self.text = text
            self.encoding = encoding
            self.comment = comment
        }

        /// The body's bytes.
        public var data: Data? { Content.bytes(text: text, encoding: encoding) }
    }

    public struct Response: Codable, Sendable {
        /// 0 for a hop that got no response (see `Entry.error`).
        public var status: Int
        public var statusText: String
        public var httpVersion: String
        public var cookies: [NameValue]
        public var headers: [NameValue]
        public var content: Content
        public var redirectURL: String
        public var headersSize: Int
        /// Bytes received for the body (compressed, as on the wire); -1 when unknown.
        public var bodySize: Int

        public init(
            status: Int, statusText: String, httpVersion: String, headers: [NameValue], content: Content,
            redirectURL: String = "", headersSize: Int = -1, bodySize: Int = -1, cookies: [NameValue] = []
        ) {
            self.status = status
            self.statusText = statusText
            self.httpVersion = httpVersion
            self.cookies = cookies
            self.headers = headers
            self.content = content
            self.redirectURL = redirectURL
            self.headersSize = headersSize
            self.bodySize = bodySize
        }

        enum CodingKeys: String, CodingKey {
            case status, statusText, httpVersion, cookies, headers, content, redirectURL, headersSize, bodySize
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            status = try container.decode(Int.self, forKey: .status)
            statusText = try container.decodeIfPresent(String.self, forKey: .statusText) ?? ""
            content = try container.decodeIfPresent(Content.self, forKey: .content) ?? Content(size: 0, mimeType: "")
            redirectURL = try container.decodeIfPresent(String.self, forKey: .redirectURL) ?? ""
            // As a request's: a browser may leave them out too.
            (httpVersion, cookies, headers, headersSize, bodySize) = try MessageFields(from: decoder).values
        }
    }

    /// A response's body, decoded (after Content-Encoding): `text` as text,
    /// or base64 with `encoding` "base64".
    public struct Content: Codable, Sendable {
        /// Bytes of the decoded body (all of it, even when `text` was cut).
        public var size: Int
        /// Bytes saved by the Content-Encoding (`size` minus the response's `bodySize`).
        public var compression: Int?
        public var mimeType: String
        public var text: String?
        public var encoding: String?
        public var comment: String?

        public init(
            size: Int, mimeType: String, text: String? = nil, encoding: String? = nil, compression: Int? = nil,
            comment: String? = nil
        ) {
            self.size = size
            self.compression = compression
            self.mimeType = mimeType
            self.text = text
            self.encoding = encoding
            self.comment = comment
        }

        enum CodingKeys: String, CodingKey {
            case size, compression, mimeType, text, encoding, comment
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            size = try container.decodeIfPresent(Int.self, forKey: .size) ?? 0
            compression = try container.decodeIfPresent(Int.self, forKey: .compression)
            mimeType = try container.decodeIfPresent(String.self, forKey: .mimeType) ?? ""
            text = try container.decodeIfPresent(String.self, forKey: .text)
            encoding = try container.decodeIfPresent(String.self, forKey: .encoding)
            comment = try container.decodeIfPresent(String.self, forKey: .comment)
        }

        /// The body's bytes (empty when the file kept none).
        public var data: Data { text.flatMap { Self.bytes(text: $0, encoding: encoding) } ?? Data() }

        /// `text` as bytes: base64-decoded when `encoding` says so, else UTF-8.
        static func bytes(text: String, encoding: String?) -> Data? {
            if encoding?.lowercased() == "base64" { return Data(base64Encoded: text) }
            return Data(text.utf8)
        }

        /// Text when `bytes` are UTF-8, base64 otherwise.
        static func encode(_ bytes: Data) -> (text: String, encoding: String?) {
            if let text = String(data: bytes, encoding: .utf8) { return (text, nil) }
            return (bytes.base64EncodedString(), "base64")
        }
    }

    /// Milliseconds per phase, -1 for a phase that did not happen.
    public struct Timings: Codable, Sendable, Equatable {
        /// Queued before the connection was sought.
        public var blocked: Double
        public var dns: Double
        /// TCP connect, and the TLS handshake (`ssl`) with it.
        public var connect: Double
        public var ssl: Double
        public var send: Double
        /// From the request sent to the response's first byte.
        public var wait: Double
        public var receive: Double

        public init(
            blocked: Double = -1, dns: Double = -1, connect: Double = -1, ssl: Double = -1, send: Double = 0,
            wait: Double = 0, receive: Double = 0
        ) {
            self.blocked = blocked
            self.dns = dns
            self.connect = connect
            self.ssl = ssl
            self.send = send
            self.wait = wait
            self.receive = receive
        }

        enum CodingKeys: String, CodingKey {
            case blocked, dns, connect, ssl, send, wait, receive
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            blocked = try container.decodeIfPresent(Double.self, forKey: .blocked) ?? -1
            dns = try container.decodeIfPresent(Double.self, forKey: .dns) ?? -1
            connect = try container.decodeIfPresent(Double.self, forKey: .connect) ?? -1
            ssl = try container.decodeIfPresent(Double.self, forKey: .ssl) ?? -1
            send = try container.decodeIfPresent(Double.self, forKey: .send) ?? 0
            wait = try container.decodeIfPresent(Double.self, forKey: .wait) ?? 0
            receive = try container.decodeIfPresent(Double.self, forKey: .receive) ?? 0
        }

        /// What `Entry.time` is: every phase that happened, `ssl` aside
        /// (inside `connect`).
        public var total: Double {
            [blocked, dns, connect, send, wait, receive].filter { $0 >= 0 }.reduce(0, +)
        }
    }
}
