import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Content-Range: bytes a-b/total` (RFC 9110 §14.4).
struct ContentRange {
    var start: Int64
    var end: Int64
    var total: Int64?

    init(start: Int64, end: Int64, total: Int64?) {
        self.start = start
        self.end = end
        self.total = total
    }

    init?(_ response: HTTPURLResponse) {
        guard let value = response.value(forHTTPHeaderField: "Content-Range") else { return nil }
        let parts = value.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bytes" else { return nil }
        let rangeAndTotal = parts[1].split(separator: "/", maxSplits: 1)
        let bounds = rangeAndTotal[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]), start <= end else { return nil }
        self.start = start
        self.end = end
        total = rangeAndTotal.count == 2 ? Int64(rangeAndTotal[1]) : nil
    }
}
