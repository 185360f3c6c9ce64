import AsyncURLSession
import Foundation

/// Turns command-line arguments into a URLRequest, with errors that say
/// which argument is wrong.
enum RequestBuilder {
    static func request(url text: String, method: String?, headers: [String], data: String?) throws -> URLRequest {
        guard let url = URL(string: text), url.scheme != nil else {
            throw FetchError("'\(text)' is not a URL; write it as http://host/path, https://host/path or ws(s)://host/path")
        }
        var request = URLRequest(url: url)
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else {
                throw FetchError("header '\(header)' has no colon; write it as 'Name: value'")
            }
            let name = header[..<colon].trimmingCharacters(in: .whitespaces)
            let value = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            request.addValue(value, forHTTPHeaderField: name)
        }
        if let data {
            if data.hasPrefix("@") {
                request.httpBody = try FetchCommand.read(file: String(data.dropFirst()), purpose: "the -d file")
            } else {
                request.httpBody = Data(data.utf8)
            }
        }
        request.httpMethod = method ?? (data == nil ? "GET" : "POST")
        return request
    }
}
