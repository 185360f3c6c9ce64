import NIOCore
import NIOHTTP1

/// GET /range/N?etag=E&dropAfter=K&stallAfter=K: N pattern bytes with validators, honouring
/// Range and If-Range. With dropAfter, a request for the whole body gets K bytes and then the
/// connection closes (a download cut short); with stallAfter, K bytes and then silence with
/// the connection open (a download that is still running when the client cancels it). Range
/// requests are served in full, so the download can be resumed.
enum RangeRoute {
    /// Fixed, so If-Range with a date can be tested too.
    static let lastModified = "Wed, 01 Jan 2025 00:00:00 GMT"

    static func respond(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let total = try request.target.integerSegment(1, named: "N")
        let etag = "\"\(request.target.value("etag") ?? "v1-\(total)")\""
        var headers = HTTPHeaders()
        headers.add(name: "ETag", value: etag)
        headers.add(name: "Last-Modified", value: lastModified)
        headers.add(name: "Accept-Ranges", value: "bytes")

        let requestHeaders = request.head.headers
        guard let rangeHeader = requestHeaders.first(name: "range"),
            let range = ByteRange(parsing: rangeHeader),
            requestHeaders.first(name: "if-range").map({ $0 == etag || $0 == lastModified }) ?? true
        else {
            // No usable Range, or If-Range names another version: the whole current body.
            headers.add(name: "Content-Type", value: "application/octet-stream")
            headers.add(name: "Content-Length", value: String(total))
            let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
            if let dropAfter = request.target.value("dropAfter").flatMap(Int.init), dropAfter < total {
                return .pattern(head, PatternStream(count: max(0, dropAfter), ending: .close))
            }
            if let stallAfter = request.target.value("stallAfter").flatMap(Int.init), stallAfter < total {
                return .pattern(head, PatternStream(count: max(0, stallAfter), ending: .stall))
            }
            return .pattern(head, PatternStream(count: total))
        }

        guard let (first, last) = range.resolved(total: total) else {
            headers.add(name: "Content-Range", value: "bytes */\(total)")
            return .text(.rangeNotSatisfiable, "range not satisfiable\n", headers: headers)
        }
        let count = last - first + 1
        headers.add(name: "Content-Type", value: "application/octet-stream")
        headers.add(name: "Content-Range", value: "bytes \(first)-\(last)/\(total)")
        headers.add(name: "Content-Length", value: String(count))
        return .pattern(
            HTTPResponseHead(version: .http1_1, status: .partialContent, headers: headers),
            PatternStream(offset: first, count: count)
        )
    }
}

/// One byte range of a Range header: "bytes=a-", "bytes=a-b" or the suffix form "bytes=-n".
/// Anything else (other units, several ranges, a > b) is not understood, and as RFC 9110
/// allows, the Range header is then ignored.
struct ByteRange {
    enum Form {
        case from(Int)
        case between(Int, Int)
        case suffix(Int)
    }

    let form: Form

    init?(parsing header: String) {
        let trimmed = header.trimmingSpaces
        guard trimmed.lowercased().hasPrefix("bytes=") else { return nil }
        let spec = trimmed.dropFirst("bytes=".count).trimmingSpaces
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let startText = spec[..<dash].trimmingSpaces
        let endText = spec[spec.index(after: dash)...].trimmingSpaces
        switch (Int(startText), Int(endText)) {
        case (let start?, nil) where endText.isEmpty && start >= 0:
            form = .from(start)
        case (let start?, let end?) where start >= 0 && end >= start:
            form = .between(start, end)
        case (nil, let length?) where startText.isEmpty && length >= 0:
            form = .suffix(length)
        default:
            return nil
        }
    }

    /// First and last byte for a body of `total` bytes, nil when unsatisfiable (416).
    func resolved(total: Int) -> (Int, Int)? {
        switch form {
        case .from(let start):
            return start < total ? (start, total - 1) : nil
        case .between(let start, let end):
            return start < total ? (start, min(end, total - 1)) : nil
        case .suffix(let length):
            return length > 0 && total > 0 ? (max(0, total - length), total - 1) : nil
        }
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
