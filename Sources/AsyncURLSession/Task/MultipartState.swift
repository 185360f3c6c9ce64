import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A multipart/x-mixed-replace body being split into parts: the outer
/// response and the parser. Each part becomes a response of its own (the
/// outer one's URL and status, the part's headers) followed by its bytes,
/// as URLSession calls didReceiveResponse once per part.
struct MultipartState {
    private var parser: MultipartReplaceParser
    private let outer: HTTPURLResponse

    /// What the task hands on, in order.
    enum Part {
        case response(HTTPURLResponse)
        case body(Data)
    }

    init(parser: MultipartReplaceParser, outer: HTTPURLResponse) {
        self.parser = parser
        self.outer = outer
    }

    /// Feeds the next bytes of the outer body; returns the parts' responses
    /// and bytes they complete. A part head that makes no response (the
    /// outer response has no URL) is skipped with its headers.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [Part] {
        var parts: [Part] = []
        for output in parser.feed(bytes) {
            switch output {
            case .partHead(let fields):
                var headers: [String: String] = [:]
                for field in fields { headers[field.name] = field.value }
                guard let url = outer.url,
                    let part = HTTPURLResponse(
                        url: url, statusCode: outer.statusCode, httpVersion: "HTTP/1.1", headerFields: headers)
                else { continue }
                parts.append(.response(part))
            case .body(let data):
                parts.append(.body(data))
            case .end:
                break
            }
        }
        return parts
    }
}
