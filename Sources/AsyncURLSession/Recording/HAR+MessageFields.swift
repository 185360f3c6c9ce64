import Foundation

extension HAR {
    /// The fields a request and a response both have, read from a file the
    /// same way for both: each may be left out (a browser writes only what
    /// it saw), and reads then as unknown (sizes -1) or empty.
    struct MessageFields: Decodable {
        var httpVersion: String
        var cookies: [NameValue]
        var headers: [NameValue]
        var headersSize: Int
        var bodySize: Int

        enum CodingKeys: String, CodingKey {
            case httpVersion, cookies, headers, headersSize, bodySize
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            httpVersion = try container.decodeIfPresent(String.self, forKey: .httpVersion) ?? ""
            cookies = try container.decodeIfPresent([NameValue].self, forKey: .cookies) ?? []
            headers = try container.decodeIfPresent([NameValue].self, forKey: .headers) ?? []
            headersSize = try container.decodeIfPresent(Int.self, forKey: .headersSize) ?? -1
            bodySize = try container.decodeIfPresent(Int.self, forKey: .bodySize) ?? -1
        }

        /// In the order `Request` and `Response` assign them from.
        var values: (String, [NameValue], [NameValue], Int, Int) {
            (httpVersion, cookies, headers, headersSize, bodySize)
        }
    }
}
